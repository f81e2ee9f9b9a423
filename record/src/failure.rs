//! Why a recording failed, and the exit statuses perf gives each failure.

/// Exit statuses of our own (perf's).
pub const EXIT_FAILED: u8 = 255;
pub const EXIT_USAGE: u8 = 129;
/// perf's status after `--list-opts`.
pub const EXIT_LIST: u8 = 130;
/// perf's -EINVAL, for an option value it refuses after parsing (`--strict-freq`).
pub const EXIT_INVALID: u8 = 234;

pub type Error = Box<dyn std::error::Error>;

/// Why a recording failed: a usage error (129, perf's for an event it cannot parse), an
/// option value perf refuses once parsed (234), or any other (255).
pub enum Failure {
    Usage(String),
    Invalid(String),
    Failed(Error),
    /// perf's words and its status, whatever they are (`-u` of an unknown user: 0).
    Said(String, u8),
}

impl<E: Into<Error>> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Failed(e.into())
    }
}
