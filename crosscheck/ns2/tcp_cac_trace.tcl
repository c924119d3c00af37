# [Tarasiuk05] Table 1 links with a few connections and no randomness, for a
# packet-by-packet comparison with qoslab (tests/test_crosscheck.py): n
# greedy Reno connections with tcp_cac.tcl's "matched" settings (limited
# transmit off), connection i starting at i * gap_s, 1 Gb/s access links
# without delay, a 100 Mb/s bottleneck r0 -> sink of the given one-way delay
# with a DropTail queue-limit of qlim (21: 20 waiting, as qoslab's
# 20-packet FIFO). Writes ns-2's queue trace of r0 -> sink (+ - d r lines
# with flow id and sequence number) to out_file. [access_delays_ns]: a
# comma-separated list of n whole numbers of nanoseconds, each access
# link's one-way delay (tcp_cac.tcl's tie-free variant; absent: none).
#
#   ns tcp_cac_trace.tcl <n> <gap_s> <delay_ms> <duration_s> <qlim> <out_file> [access_delays_ns]

if {$argc != 6 && $argc != 7} {
    puts stderr "usage: ns tcp_cac_trace.tcl n gap_s delay_ms duration_s qlim out_file \[access_delays_ns\]"
    exit 2
}
lassign $argv n gap delay_ms duration qlim outfile access_delays
source [file join [file dirname [info script]] ns_list.tcl]
set access_delays [ns_list tcp_cac_trace.tcl access_delays_ns $n $access_delays]

Agent/TCP set window_              44
Agent/TCP set packetSize_          1500
Agent/TCP set useHeaders_          false
Agent/TCP set maxcwnd_             44
Agent/TCP set windowInit_          1
Agent/TCP set windowOption_        1
Agent/TCP set syn_                 false
Agent/TCP set delay_growth_        false
Agent/TCP set singledup_           0
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

set ns [new Simulator]
set r0 [$ns node]
set sink [$ns node]
$ns simplex-link $r0 $sink 100Mb ${delay_ms}ms DropTail
$ns simplex-link $sink $r0 100Mb ${delay_ms}ms DropTail
$ns queue-limit $r0 $sink $qlim
$ns queue-limit $sink $r0 1000
set tf [open $outfile w]
$ns trace-queue $r0 $sink $tf
for {set i 0} {$i < $n} {incr i} {
    set s [$ns node]
    $ns duplex-link $s $r0 1Gb [lindex $access_delays $i]ns DropTail
    $ns queue-limit $s $r0 1000
    $ns queue-limit $r0 $s 1000
    set tcp($i) [new Agent/TCP/Reno]
    $tcp($i) set fid_ $i
    $ns attach-agent $s $tcp($i)
    set snk [new Agent/TCPSink]
    $ns attach-agent $sink $snk
    $ns connect $tcp($i) $snk
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($i)
    $ns at [expr {$i * $gap}] "$ftp start"
}
proc finish {} {
    global tf
    close $tf
    exit 0
}
$ns at $duration "finish"
$ns run
