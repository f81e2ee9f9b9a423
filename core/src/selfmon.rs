//! Self-monitoring: the control page seqlock, counter reads and time conversions (issue 11).
