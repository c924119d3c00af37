# The tie-free variant's access-link delays, shared by tcp_cac.tcl and
# tcp_cac_trace.tcl: [access_delays script n arg] returns n whole numbers of
# nanoseconds, all zero when arg is empty, otherwise arg split at commas.
# A list of the wrong length or a value that is not a whole number exits 2
# with a message naming the script and the argument.
proc access_delays {script n arg} {
    if {$arg eq ""} {
        return [lrepeat $n 0]
    }
    set delays [split $arg ,]
    if {[llength $delays] != $n} {
        puts stderr "$script: access_delays_ns must list $n delays, got [llength $delays]"
        exit 2
    }
    foreach d $delays {
        if {![string is digit -strict $d]} {
            puts stderr "$script: access_delays_ns: '$d' is not a whole number of nanoseconds"
            exit 2
        }
    }
    return $delays
}
