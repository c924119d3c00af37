# The [Claypool00] (D-CBT paper, §5) dumbbell for the RED crosscheck, in ns-2.35.
#
#   ns red_dumbbell.tcl <n_tcp> <n_cbr> <duration_s> <seed> <trace_file> [cbr_start_s [n_late [late_start_s [rate [cbr_rates [n_udp [udp_rates [n_mm scale_log [ecn [access_delay [bottleneck_delay [max_window]]]]]]]]]]]]
#
# n_tcp FTP/TCP Reno flows from 0 s, n_late more from late_start_s (default
# 20 s, as the paper's second group), n_cbr CBR/UDP flows from cbr_start_s
# (default 10 s) at 5 Mb/s, and n_udp more CBR/UDP flows from 0 s (default
# none). `cbr_rates` and `udp_rates` are rate schedules "t:rate,t:rate,..."
# (t in seconds, rate as ns-2 reads it, e.g. 540kb): each group's flows send
# at the first rate from their start and switch to the next at its time
# ("-" or absent: 5Mb for the CBR). Each flow is on its own
# source and destination host behind routers r0 and r1; access links
# 25 Mb/s / 5 ms, bottleneck r0 -> r1 `rate` (default 25Mb) / 20 ms with a 60-packet RED
# queue (5 / 15 / max_p 0.1 / w_q 0.002). Every flow starts within 100 ms
# of its group's start (uniform jitter). Writes the bottleneck's queue
# trace (r0 -> r1 only) in ns-2's standard trace format. Flow ids: the
# early TCP flows, then the late ones, then the CBR, then the other UDP,
# then the MM_APP flows. n_mm MM_APP flows ([Claypool00 §5]: 300 / 500 / 700 /
# 900 / 1100 kb/s, 1000 B packets) run from 0 s the feedback loop of the
# MmApp that the MM_APP's author published for ns-2 ("NS by Example", "Add
# New Application and Agent"), rewritten here in OTcl (below); each scale the
# source applies is written to `scale_log` as "time flow_id scale".
# With `ecn` 1 the TCP agents are ECN-capable (`ecn_`) and RED marks
# ECN-capable packets instead of dropping them early (`setbit_`); the
# access links' and the bottleneck's one-way delays default to 5ms and
# 20ms, the TCP window to 20 segments.
#
# Every Queue/RED and Agent/TCP parameter that matters is set explicitly:
# ns-2.35's defaults are not those of the paper's era (gentle_, bytes_,
# queue_in_bytes_ and use_mark_p_ true, q_weight_ -1 (automatic),
# thresholds 0 (automatic), idle_pktsize_ 100, windowInit_ 2, tcpTick_ 10 ms,
# syn_ true, singledup_ 1), and the crosscheck must compare RED, not defaults.

if {$argc < 5} {
    puts stderr "usage: ns red_dumbbell.tcl n_tcp n_cbr duration_s seed trace_file \[cbr_start_s \[n_late \[late_start_s \[rate\]\]\]\]"
    exit 2
}
set n_tcp     [lindex $argv 0]
set n_cbr     [lindex $argv 1]
set duration  [lindex $argv 2]
set seed      [lindex $argv 3]
set tracefile [lindex $argv 4]
set cbr_start [expr {$argc > 5 ? [lindex $argv 5] : 10.0}]
set n_late    [expr {$argc > 6 ? [lindex $argv 6] : 0}]
set late_start [expr {$argc > 7 ? [lindex $argv 7] : 20.0}]
set rate      [expr {$argc > 8 ? [lindex $argv 8] : "25Mb"}]
set cbr_rates [expr {$argc > 9 && [lindex $argv 9] ne "-" ? [lindex $argv 9] : "0:5Mb"}]
set n_udp     [expr {$argc > 10 ? [lindex $argv 10] : 0}]
set udp_rates [expr {$argc > 11 ? [lindex $argv 11] : "0:5Mb"}]
set n_mm      [expr {$argc > 12 ? [lindex $argv 12] : 0}]
set scale_log [expr {$argc > 13 ? [lindex $argv 13] : ""}]
set ecn       [expr {$argc > 14 ? [lindex $argv 14] : 0}]
set access_delay [expr {$argc > 15 ? [lindex $argv 15] : "5ms"}]
set bottleneck_delay [expr {$argc > 16 ? [lindex $argv 16] : "20ms"}]
set max_window [expr {$argc > 17 ? [lindex $argv 17] : 20}]

# --- RED: packet mode, FJ93 parameters (every setting in red_fj93.tcl) -------
source [file join [file dirname [info script]] red_fj93.tcl]
Queue/RED set summarystats_    false
Queue/RED set setbit_          [expr {$ecn ? "true" : "false"}] ;# ECN: mark instead of an early drop
Queue set limit_               60    ;# access links' drop-tail queues (qoslab default fifo 60 pkts)

# --- TCP Reno, the paper's era (qoslab's defaults, docs/decisions.md) ---------
Agent/TCP set packetSize_          1000  ;# 1000 B on the wire, every data packet:
Agent/TCP set useHeaders_          false ;# true adds tcpip_base_hdr_size_ (40 B) to all but the first
Agent/TCP set tcpip_base_hdr_size_ 40
Agent/TCP set window_              $max_window ;# max window, packets
Agent/TCP set maxcwnd_             $max_window
Agent/TCP set windowInit_          1
Agent/TCP set windowOption_        1
Agent/TCP set syn_                 false ;# no SYN exchange (qoslab has none)
Agent/TCP set delay_growth_        false
Agent/TCP set singledup_           0     ;# no limited transmit
Agent/TCP set numdupacks_          3
Agent/TCP set bugFix_              true  ;# one fast retransmit per window
Agent/TCP set maxburst_            0
Agent/TCP set overhead_            0
Agent/TCP set timestamps_          false
Agent/TCP set ecn_                 $ecn
Agent/TCP set tcpTick_             0.1   ;# timer granularity 100 ms
Agent/TCP set minrto_              0.2
Agent/TCP set maxrto_              60
Agent/TCP set rtxcur_init_         3.0   ;# initial RTO 3 s
Agent/TCP set srtt_init_           0
Agent/TCP set rttvar_init_         12
Agent/TCP set rfc2988_             true
Agent/TCP set ts_resetRTO_         false
Agent/TCP set frto_enabled_        0
Agent/TCPSink set packetSize_      40    ;# ACKs: 40 B on the wire

Agent/UDP set packetSize_ 1000
Application/Traffic/CBR set packetSize_ 1000
Application/Traffic/CBR set rate_       5Mb
Application/Traffic/CBR set random_     0

set ns [new Simulator]
ns-random $seed
set jitter [new RNG]
$jitter seed [expr {$seed + 1}]

set r0 [$ns node]
set r1 [$ns node]
# RED on r0 -> r1 only; the ACKs' direction is drop-tail, as qoslab's
# reverse_queue defaults to the scenario's default_queue (fifo, 60 packets).
$ns simplex-link $r0 $r1 $rate $bottleneck_delay RED
$ns simplex-link $r1 $r0 25Mb $bottleneck_delay DropTail
$ns queue-limit $r0 $r1 60
$ns queue-limit $r1 $r0 60

set tf [open $tracefile w]
$ns trace-queue $r0 $r1 $tf

proc pair {} {
    global ns r0 r1 access_delay
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r0 25Mb $access_delay DropTail
    $ns duplex-link $r1 $d 25Mb $access_delay DropTail
    return [list $s $d]
}

set fid 0
proc reno {start} {
    global ns jitter fid
    lassign [pair] s d
    set tcp [new Agent/TCP/Reno]
    set sink [new Agent/TCPSink]
    $tcp set fid_ $fid
    $ns attach-agent $s $tcp
    $ns attach-agent $d $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at [expr {$start + [$jitter uniform 0 0.1]}] "$ftp start"
    incr fid
}
for {set i 0} {$i < $n_tcp} {incr i} {
    reno 0.0
}
for {set i 0} {$i < $n_late} {incr i} {
    reno $late_start
}
# A CBR/UDP flow from `start` (+ jitter) whose rate follows `sched`
# ("t:rate,..."): ns-2.35's CBR recomputes its interval from rate_ at every
# packet, so a rate set at t applies from the next packet on.
proc cbr_flow {start sched} {
    global ns jitter fid
    lassign [pair] s d
    set udp [new Agent/UDP]
    set null [new Agent/Null]
    $udp set fid_ $fid
    $ns attach-agent $s $udp
    $ns attach-agent $d $null
    $ns connect $udp $null
    set cbr [new Application/Traffic/CBR]
    $cbr attach-agent $udp
    set steps [split $sched ,]
    $cbr set rate_ [lindex [split [lindex $steps 0] :] 1]
    foreach step [lrange $steps 1 end] {
        lassign [split $step :] t r
        $ns at $t "$cbr set rate_ $r"
    }
    $ns at [expr {$start + [$jitter uniform 0 0.1]}] "$cbr start"
    incr fid
}
for {set i 0} {$i < $n_cbr} {incr i} {
    cbr_flow $cbr_start $cbr_rates
}
for {set i 0} {$i < $n_udp} {incr i} {
    cbr_flow 0.0 $udp_rates
}

# --- MM_APP: the published MmApp's feedback loop, in OTcl --------------------
# Each flow is a UDP agent pair; data and feedback are real packets that
# carry their fields as PacketData ("$udp send nbytes text"; the agent at the
# other end, with no application attached, hands the text to its
# process_data instproc). The rules, as the MmApp's description and code
# state them:
#  - the source starts at scale 0 and sends 1000 B packets at its scale's
#    rate; the gap after a packet is computed when it leaves, at the scale
#    of that moment (a new scale applies from the next gap);
#  - each data packet carries its sequence number (0, 1, ...) and send time;
#  - the receiver estimates the RTT as twice the one-way delay: the first
#    packet (seq 0) sets it, then rtt = 0.9 rtt + 0.1 (2 x one-way delay);
#  - it counts received packets and sequence gaps (lost) since its last
#    feedback; the arrival of seq 0 triggers the first feedback at once,
#    then it feeds back every rtt (the estimate when the timer is set);
#  - at each feedback: if some packet arrived, halve the scale index
#    (integer) if any was lost, else add one (at most 4); no packet: keep it;
#    the counts restart; a 40 B feedback packet carries the scale, which the
#    source applies when it arrives.
set mm_rates {300000 500000 700000 900000 1100000}
set mm_log ""
if {$scale_log ne ""} { set mm_log [open $scale_log w] }

Agent/UDP instproc process_data {from data} {
    global mm_of
    set k $mm_of($self)
    if {[lindex $data 0] eq "d"} {
        mm_data $k [lindex $data 1] [lindex $data 2]
    } else {
        mm_scale $k [lindex $data 1]
    }
}
proc mm_send {k} {
    global ns mm mm_rates
    set now [$ns now]
    $mm(snd,$k) send 1000 "d $mm(seq,$k) $now"
    incr mm(seq,$k)
    $ns at [expr {$now + 8000.0 / [lindex $mm_rates $mm(scale,$k)]}] "mm_send $k"
}
proc mm_scale {k scale} {
    global ns mm mm_log
    if {$scale != $mm(scale,$k)} {
        set mm(scale,$k) $scale
        if {$mm_log ne ""} { puts $mm_log "[$ns now] $mm(fid,$k) $scale" }
    }
}
proc mm_data {k seq sent} {
    global ns mm
    set now [$ns now]
    set sample [expr {2.0 * ($now - $sent)}]
    if {$seq == 0} {
        set mm(last,$k) -1
        set mm(rscale,$k) 0
        set mm(lost,$k) 0
        set mm(recv,$k) 0
        set mm(rtt,$k) $sample
    } elseif {![info exists mm(rtt,$k)]} {
        return ;# seq 0 lost: the published receiver never starts its loop
    } else {
        set mm(rtt,$k) [expr {0.9 * $mm(rtt,$k) + 0.1 * $sample}]
    }
    incr mm(recv,$k)
    incr mm(lost,$k) [expr {$seq - $mm(last,$k) - 1}]
    set mm(last,$k) $seq
    if {$seq == 0} { mm_feedback $k }
}
proc mm_feedback {k} {
    global ns mm
    if {$mm(recv,$k) > 0} {
        if {$mm(lost,$k) > 0} {
            set mm(rscale,$k) [expr {$mm(rscale,$k) / 2}]
        } elseif {$mm(rscale,$k) < 4} {
            incr mm(rscale,$k)
        }
    }
    set mm(recv,$k) 0
    set mm(lost,$k) 0
    $mm(rcv,$k) send 40 "a $mm(rscale,$k)"
    $ns at [expr {[$ns now] + $mm(rtt,$k)}] "mm_feedback $k"
}
proc mm_flow {k} {
    global ns jitter fid mm mm_of
    lassign [pair] s d
    set snd [new Agent/UDP]
    set rcv [new Agent/UDP]
    $snd set fid_ $fid
    $rcv set fid_ $fid
    $ns attach-agent $s $snd
    $ns attach-agent $d $rcv
    $ns connect $snd $rcv
    set mm(snd,$k) $snd
    set mm(rcv,$k) $rcv
    set mm(seq,$k) 0
    set mm(scale,$k) 0
    set mm(fid,$k) $fid
    set mm_of($snd) $k
    set mm_of($rcv) $k
    $ns at [$jitter uniform 0 0.1] "mm_send $k"
    incr fid
}
for {set i 0} {$i < $n_mm} {incr i} {
    mm_flow $i
}

proc finish {} {
    global ns tf mm_log
    $ns flush-trace
    close $tf
    if {$mm_log ne ""} { close $mm_log }
    exit 0
}
$ns at $duration "finish"
$ns run
