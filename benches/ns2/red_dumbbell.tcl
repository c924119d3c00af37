# The RED reference dumbbell (scenarios/examples/red_dumbbell.toml) in
# ns-2.35, for `make bench`'s whole-process comparison:
#
#   ns red_dumbbell.tcl <duration_s> <seed>
#
# 40 CBR/UDP sources of 1 Mb/s (1000 B packets every 8 ms, starts within
# the first 8 ms) on hosts src0..src39, access links 100 Mb/s / 5 ms into
# r0, bottleneck r0 -> r1 25 Mb/s / 20 ms with a 60-packet RED queue (5 /
# 15 / max_p 0.1 / w_q 0.002, not gentle), r1 -> sink0 100 Mb/s / 5 ms.
# No trace is written (qoslab's bench counts its own results, which ns-2
# would have to trace to match; tracing would only slow ns-2 down).
# Prints the bottleneck's arrivals and drops at the end.

if {$argc < 2} {
    puts stderr "usage: ns red_dumbbell.tcl duration_s seed"
    exit 2
}
set duration [lindex $argv 0]
set seed     [lindex $argv 1]

# RED exactly as the crosscheck runs it (crosscheck/ns2/red_fj93.tcl).
source [file join [file dirname [info script]] .. .. crosscheck ns2 red_fj93.tcl]
Queue/RED set summarystats_    false
Queue set limit_               60

Agent/UDP set packetSize_ 1000
Application/Traffic/CBR set packetSize_ 1000
Application/Traffic/CBR set rate_       1Mb
Application/Traffic/CBR set random_     0

set ns [new Simulator]
ns-random $seed
set jitter [new RNG]
$jitter seed [expr {$seed + 1}]

set r0 [$ns node]
set r1 [$ns node]
set sink [$ns node]
$ns simplex-link $r0 $r1 25Mb 20ms RED
$ns simplex-link $r1 $r0 25Mb 20ms DropTail
$ns queue-limit $r0 $r1 60
$ns duplex-link $r1 $sink 100Mb 5ms DropTail
set mon [$ns monitor-queue $r0 $r1 ""]

for {set i 0} {$i < 40} {incr i} {
    set s [$ns node]
    $ns duplex-link $s $r0 100Mb 5ms DropTail
    set udp [new Agent/UDP]
    set null [new Agent/Null]
    $ns attach-agent $s $udp
    $ns attach-agent $sink $null
    $ns connect $udp $null
    set cbr [new Application/Traffic/CBR]
    $cbr attach-agent $udp
    $ns at [$jitter uniform 0 0.008] "$cbr start"
}

proc finish {} {
    global mon
    puts "arrivals [$mon set parrivals_] drops [$mon set pdrops_]"
    exit 0
}
$ns at $duration "finish"
$ns run
