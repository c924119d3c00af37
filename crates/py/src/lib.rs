//! qoslab-py: the native module `qoslab._core` (being written).
