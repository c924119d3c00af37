# RED as the [Claypool00] papers ran it, for ns-2.35 (queue/red.cc), packet
# mode, Floyd & Jacobson 1993 parameters (5 / 15 / max_p 0.1 / w_q 0.002).
# Sourced by crosscheck/ns2/red_dumbbell.tcl and benches/ns2/red_dumbbell.tcl,
# so the crosscheck and the benchmark run the same RED.

Queue/RED set bytes_           false ;# no byte-mode probability scaling
Queue/RED set queue_in_bytes_  false ;# thresholds and average in packets
Queue/RED set thresh_          5
Queue/RED set maxthresh_       15
Queue/RED set linterm_         10    ;# max_p = 1 / linterm_ = 0.1
Queue/RED set q_weight_        0.002
Queue/RED set mean_pktsize_    1000  ;# s = 1000 B at the link rate: ptc = 3125 pkt/s
Queue/RED set idle_pktsize_    1000  ;# only read with cautious_ 3; set for completeness
Queue/RED set wait_            true  ;# drop spacing p/(2 - count p)
Queue/RED set gentle_          false
Queue/RED set setbit_          false ;# no ECN
Queue/RED set use_mark_p_      false ;# true would turn forced drops into drop_early() calls
Queue/RED set mark_p_          0.1
Queue/RED set drop_tail_       true
Queue/RED set drop_front_      false
Queue/RED set drop_rand_       false
Queue/RED set ns1_compat_      false ;# a forced drop resets count
Queue/RED set adaptive_        0
Queue/RED set feng_adaptive_   0
Queue/RED set cautious_        0
Queue/RED set doubleq_         false
