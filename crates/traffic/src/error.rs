//! Errors of the generator and the sink: a field of the spec (or an
//! option of the command line) that cannot be used, a bad line of a
//! replay file, a socket the system refused, a sender thread that died.
//! Each displays as `where: what`, naming the field, option or file line.

/// Why the generator or the sink cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    /// A field of the spec (`flows[3].model`) or an option (`--listen 1.2.3.4:9`) that cannot be used.
    #[error("{field}: {message}")]
    Field { field: String, message: String },
    /// A replay file: a line (`path:line`) or the file itself (`path`).
    #[error("{at}: {message}")]
    Replay { at: String, message: String },
    /// A socket call the system refused: what it was for (the field or option it serves,
    /// and the call), and the system's reason.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A sender thread panicked (a bug).
    #[error("a {0} thread panicked")]
    Panicked(&'static str),
}

impl TrafficError {
    /// A field (or option) and what is wrong with it.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> TrafficError {
        TrafficError::Field { field: field.into(), message: message.into() }
    }
    /// A socket call for `context` that failed with `source`.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> TrafficError {
        TrafficError::Io { context: context.into(), source }
    }
}
