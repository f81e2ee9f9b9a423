//! perfring-sim: a model of the kernel's perf producer on top of `perfring`.
