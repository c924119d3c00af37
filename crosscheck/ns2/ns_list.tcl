# Per-connection lists given on the command line (the tie-free variant's
# access-link delays, the common start times), shared by tcp_cac.tcl and
# tcp_cac_trace.tcl: [ns_list script what n arg] returns n whole numbers of
# nanoseconds, all zero when arg is empty, otherwise arg split at commas.
# A list of the wrong length or a value that is not a whole number exits 2
# with a message naming the script and the argument (what).
proc ns_list {script what n arg} {
    if {$arg eq ""} {
        return [lrepeat $n 0]
    }
    set values [split $arg ,]
    if {[llength $values] != $n} {
        puts stderr "$script: $what must list $n values, got [llength $values]"
        exit 2
    }
    foreach v $values {
        if {![string is digit -strict $v]} {
            puts stderr "$script: $what: '$v' is not a whole number of nanoseconds"
            exit 2
        }
    }
    return $values
}
