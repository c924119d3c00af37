# [Tarasiuk05] Table 1 set-up (scenarios/tcp_cac/table1_*.toml) in ns-2.35:
# 100 greedy Reno connections (FTP), each on its own source host behind
# router r0, into a 100 Mb/s bottleneck r0 -> sink0 with a 20-packet
# drop-tail buffer (queue-limit 21: ns-2's DropTail refuses a packet at
# length + 1 >= limit, so it then holds 20 waiting besides the one on the
# wire, as qoslab's `limit = "20pkts"` FIFO does); access links 1 Gb/s
# without delay; the minimum RTT is
# twice the bottleneck's one-way delay (the ACKs return over it).
#
#   ns tcp_cac.tcl <tcp> <shaper_bps> <min_rtt_ms> <duration_s> <warmup_s> <seed> <out_file> [start_jitter_s [access_delays_ns [start_times_ns]]]
#
# <tcp>: "ns2defaults" — ns-2.35's own TCP defaults, only what the paper
# states set (1500 B segments on the wire: packetSize_ 1460 with its 40 B
# headers; a 64 KB advertised window: window_ 44) — or "matched" /
# "matched_lt" — every setting matched to qoslab's defaults (scenario
# `tcp = { variant = "reno", max_window = 44, rwnd = 44 }`, preset
# `qoslab`): initial window 1, no SYN, 100 ms timer tick, RTO 200 ms to
# 60 s starting at 3 s, 1500 B on the wire in every packet, no delayed ACK,
# limited transmit off ("matched", singledup_ 0) or on ("matched_lt").
# <shaper_bps> 0: unshaped; else each connection is shaped at that rate by
# a token bucket of one packet (12,000 bits) at its source (ns-2's TBF,
# queue unbounded), as qoslab's `shaper = { rate, depth = "1pkt" }`.
# Every connection starts uniformly in [0, start_jitter_s] (default 1 s).
# [access_delays_ns]: the tie-free variant (not Table 1's; tcp_cac.py
# --tie-free, docs/decisions.md): a comma-separated list of one whole
# number of nanoseconds per connection, its access link's one-way delay
# (empty or absent: no delay, Table 1's).
# [start_times_ns]: a comma-separated list of each connection's start time
# in whole nanoseconds, used instead of the draws in [0, start_jitter_s]
# (tcp_cac.py --common-starts: both simulators run the same start times).
#
# Writes one line per connection, "fid departures drops arrivals timeouts":
# the packets that left, were dropped at and arrived at the bottleneck
# queue between <warmup_s> and <duration_s> (a flow monitor on r0 ->
# sink0), and its RTO expiries over the whole run (nrexmit_).

if {$argc < 7 || $argc > 10} {
    puts stderr "usage: ns tcp_cac.tcl tcp shaper_bps min_rtt_ms duration_s warmup_s seed out_file \[start_jitter_s \[access_delays_ns \[start_times_ns\]\]\]"
    exit 2
}
lassign $argv tcpset shaper_bps min_rtt_ms duration warmup seed outfile start_jitter access_delays start_times
if {$argc == 7} { set start_jitter 1 }
if {[lsearch {ns2defaults matched matched_lt} $tcpset] < 0} {
    puts stderr "tcp_cac.tcl: tcp must be ns2defaults, matched or matched_lt, not $tcpset"
    exit 2
}
set n 100
source [file join [file dirname [info script]] ns_list.tcl]
set access_delays [ns_list tcp_cac.tcl access_delays_ns $n $access_delays]
set given_starts [expr {$start_times ne ""}]
set start_times [ns_list tcp_cac.tcl start_times_ns $n $start_times]

Agent/TCP set window_ 44       ;# the paper's 64 KB advertised window: 44 segments of 1460 B
if {$tcpset eq "ns2defaults"} {
    Agent/TCP set packetSize_ 1460 ;# + useHeaders_' 40 B = 1500 B on the wire
} else {
    Agent/TCP set packetSize_          1500
    Agent/TCP set useHeaders_          false
    Agent/TCP set maxcwnd_             44
    Agent/TCP set windowInit_          1
    Agent/TCP set windowOption_        1
    Agent/TCP set syn_                 false
    Agent/TCP set delay_growth_        false
    Agent/TCP set singledup_           [expr {$tcpset eq "matched_lt" ? 1 : 0}]
    Agent/TCP set numdupacks_          3
    Agent/TCP set bugFix_              true
    Agent/TCP set maxburst_            0
    Agent/TCP set overhead_            0
    Agent/TCP set timestamps_          false
    Agent/TCP set ecn_                 0
    Agent/TCP set tcpTick_             0.1
    Agent/TCP set minrto_              0.2
    Agent/TCP set maxrto_              60
    Agent/TCP set rtxcur_init_         3.0
    Agent/TCP set srtt_init_           0
    Agent/TCP set rttvar_init_         12
    Agent/TCP set rfc2988_             true
    Agent/TCP set ts_resetRTO_         false
    Agent/TCP set frto_enabled_        0
    Agent/TCPSink set packetSize_      40
}

set ns [new Simulator]
ns-random $seed
set jitter [new RNG]
$jitter seed [expr {$seed + 1}]

set r0 [$ns node]
set sink [$ns node]
set d [expr {$min_rtt_ms / 2.0}]ms
$ns simplex-link $r0 $sink 100Mb $d DropTail
$ns simplex-link $sink $r0 100Mb $d DropTail
$ns queue-limit $r0 $sink 21   ;# 20 waiting, as qoslab's 20-packet FIFO (see above)
$ns queue-limit $sink $r0 1000   ;# qoslab's default_queue: 1000-packet FIFO

set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r0 $sink] $fmon

for {set i 0} {$i < $n} {incr i} {
    set s [$ns node]
    $ns duplex-link $s $r0 1Gb [lindex $access_delays $i]ns DropTail
    $ns queue-limit $s $r0 1000
    $ns queue-limit $r0 $s 1000
    set tcp($i) [new Agent/TCP/Reno]
    $tcp($i) set fid_ $i
    if {$shaper_bps > 0} {
        set tbf [new TBF]
        $tbf set rate_ $shaper_bps
        $tbf set bucket_ 12000
        $tbf set qlen_ 1000000
        $ns attach-tbf-agent $s $tcp($i) $tbf
    } else {
        $ns attach-agent $s $tcp($i)
    }
    set snk [new Agent/TCPSink]
    $ns attach-agent $sink $snk
    $ns connect $tcp($i) $snk
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($i)
    if {$given_starts} {
        $ns at [expr {[lindex $start_times $i] / 1e9}] "$ftp start"
    } else {
        $ns at [expr {$start_jitter > 0 ? [$jitter uniform 0 $start_jitter] : 0}] "$ftp start"
    }
}

# Per-flow counts (departures, drops, arrivals) at the warm-up's end and at the run's end.
proc counts {} {
    global fmon
    set c {}
    foreach f [$fmon flows] {
        dict set c [$f set flowid_] [list [$f set pdepartures_] [$f set pdrops_] [$f set parrivals_]]
    }
    return $c
}
proc snapshot {} {
    global at_warmup
    set at_warmup [counts]
}
proc finish {} {
    global n tcp outfile at_warmup
    set end [counts]
    set out [open $outfile w]
    for {set i 0} {$i < $n} {incr i} {
        set e {0 0 0}
        set w {0 0 0}
        if {[dict exists $end $i]} { set e [dict get $end $i] }
        if {[dict exists $at_warmup $i]} { set w [dict get $at_warmup $i] }
        set diff {}
        foreach x $e y $w { lappend diff [expr {$x - $y}] }
        puts $out "$i [join $diff] [$tcp($i) set nrexmit_]"
    }
    close $out
    exit 0
}
set at_warmup {}
$ns at $warmup "snapshot"
$ns at $duration "finish"
$ns run
