//! One error enum per operation: research, findings, the architecture summary, agent-sync,
//! automation, analysis and batch runs. Each says which setting or service it is about, and
//! each has the stable [`ErrorCode`] frontends report.

use camino::Utf8PathBuf;
use papayu_protocol::ErrorCode;

/// Why online research (or a trends search) gave no answer. Nothing was changed on disk.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResearchError {
    /// `PAPAYU_RESEARCH` is off: nothing is sent anywhere.
    #[error("online research is off: set PAPAYU_RESEARCH=1 (and a search service) to use it")]
    Disabled,
    /// Research is on but no search service is configured.
    #[error("online research has no search service: {what}")]
    NotConfigured {
        /// What is missing.
        what: String,
    },
    /// The question is empty.
    #[error("the research question is empty")]
    EmptyQuery,
    /// A domain to restrict the search to is not a domain name.
    #[error("{domain:?} is not a domain name")]
    BadDomain {
        /// As given.
        domain: String,
    },
    /// A URL could not be parsed.
    #[error("{url:?} is not a URL")]
    BadUrl {
        /// As given.
        url: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot start an HTTP client: {message}")]
    Client {
        /// Why.
        message: String,
    },
    /// The search service could not be reached.
    #[error("{service} at {url} is unreachable: {message}")]
    Unreachable {
        /// `tavily` or `searxng`.
        service: &'static str,
        /// The endpoint.
        url: String,
        /// Why (timed out, connection refused…).
        message: String,
    },
    /// The search service answered with an error status.
    #[error("{service} answered HTTP {status}: {body}")]
    Status {
        /// `tavily` or `searxng`.
        service: &'static str,
        /// The HTTP status.
        status: u16,
        /// The start of its answer.
        body: String,
    },
    /// The search service's answer is not in its documented shape.
    #[error("{service} answered something unexpected: {message}")]
    BadResponse {
        /// `tavily` or `searxng`.
        service: &'static str,
        /// What was wrong.
        message: String,
    },
    /// A page could not be fetched.
    #[error("cannot fetch {url}: {message}")]
    Fetch {
        /// The page.
        url: String,
        /// Why.
        message: String,
    },
}

impl ResearchError {
    /// The stable code: a configuration problem is `ERR_INVALID_CONFIG`, a service problem
    /// `ERR_IO`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Disabled | Self::NotConfigured { .. } | Self::BadDomain { .. } => {
                ErrorCode::InvalidConfig
            }
            Self::EmptyQuery | Self::BadUrl { .. } => ErrorCode::InvalidConfig,
            _ => ErrorCode::Io,
        }
    }
}

/// Why findings could not be fetched, imported or stored. A failed refresh leaves the stored
/// findings as they were.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FindingsError {
    /// Snyk sync is off or lacks a setting.
    #[error("Snyk Code sync is not configured: {what}")]
    NotConfigured {
        /// What is missing.
        what: String,
    },
    /// Snyk's API could not be reached.
    #[error("the Snyk API at {url} is unreachable: {message}")]
    Unreachable {
        /// The request.
        url: String,
        /// Why.
        message: String,
    },
    /// Snyk's API answered with an error status.
    #[error("the Snyk API answered HTTP {status}: {detail}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The JSON:API error's `detail`, or the start of the body.
        detail: String,
    },
    /// Snyk's answer is not in its documented shape.
    #[error("the Snyk API answered something unexpected: {message}")]
    BadResponse {
        /// What was wrong.
        message: String,
    },
    /// The pagination did not end.
    #[error("the Snyk API returned more than {pages} pages; stopped")]
    TooManyPages {
        /// Pages read.
        pages: usize,
    },
    /// A SARIF file is not valid SARIF 2.1.
    #[error("{path} is not a SARIF 2.1 log: {message}")]
    Sarif {
        /// The file.
        path: Utf8PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: Utf8PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The stored findings could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: Utf8PathBuf,
        /// What papayu-fs said.
        #[source]
        source: papayu_fs::FsError,
    },
}

impl FindingsError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotConfigured { .. } => ErrorCode::InvalidConfig,
            _ => ErrorCode::Io,
        }
    }
}

/// Why the architecture summary could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchitectureError {
    /// The configured path is not a project-relative path inside the project.
    #[error("PAPAYU_DOCUMATIC_ARCH_PATH={path:?}: {reason}")]
    Path {
        /// As configured.
        path: String,
        /// Why it is refused.
        reason: String,
    },
    /// The file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: Utf8PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl ArchitectureError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Path { .. } => ErrorCode::InvalidConfig,
            Self::Read { .. } => ErrorCode::Io,
        }
    }
}

/// Why the agent-sync document was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// Writing it failed (the old document, if any, is unchanged).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: Utf8PathBuf,
        /// What papayu-fs said.
        #[source]
        source: papayu_fs::FsError,
    },
    /// It could not be serialised.
    #[error("cannot serialise {path}: {message}")]
    Serialize {
        /// The file.
        path: Utf8PathBuf,
        /// Why.
        message: String,
    },
}

impl SyncError {
    /// Always `ERR_IO`.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::Io
    }
}

/// Why a command or URL was not run or opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AutomationError {
    /// `PAPAYU_AUTOMATION` is off.
    #[error(
        "personal automation is off: set PAPAYU_AUTOMATION=1 to let papayu run allow-listed commands"
    )]
    Disabled,
    /// The command line cannot be split without a shell (quotes, metacharacters).
    #[error("cannot read {line:?} as a command: {reason}")]
    Parse {
        /// The line.
        line: String,
        /// Why (papayu never hands a line to a shell).
        reason: String,
    },
    /// The allow-list or an argument rule refuses the command.
    #[error("refused `{command}`: {reason}")]
    Refused {
        /// The command as shown.
        command: String,
        /// Which rule refused it.
        reason: String,
    },
    /// An entry of `PAPAYU_AUTOMATION_ALLOW` names no command papayu knows.
    #[error("{entry:?} is not an allow-list entry; known: {known}")]
    AllowList {
        /// The entry.
        entry: String,
        /// The entries there are.
        known: String,
    },
    /// The program could not be started.
    #[error("cannot start {program}: {message}")]
    NotStarted {
        /// The program.
        program: String,
        /// The OS error.
        message: String,
    },
    /// A URL is not an `http`/`https` URL papayu opens.
    #[error("will not open {url:?}: {reason}")]
    BadUrl {
        /// As given.
        url: String,
        /// Why.
        reason: String,
    },
    /// The system opener failed.
    #[error("the opener {program} failed: {message}")]
    Opener {
        /// The opener program.
        program: String,
        /// Why.
        message: String,
    },
}

impl AutomationError {
    /// The stable code: configuration problems are `ERR_INVALID_CONFIG`; a refused command or
    /// URL is not run, `ERR_CANCELLED`; a program that fails to start is `ERR_IO`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Disabled | Self::AllowList { .. } => ErrorCode::InvalidConfig,
            Self::Parse { .. } | Self::Refused { .. } | Self::BadUrl { .. } => ErrorCode::Cancelled,
            Self::NotStarted { .. } | Self::Opener { .. } => ErrorCode::Io,
        }
    }
}

/// Why a project could not be analysed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalyzeError {
    /// The project root is not a directory.
    #[error("{path} is not a directory")]
    NotADirectory {
        /// The root given.
        path: Utf8PathBuf,
    },
}

impl AnalyzeError {
    /// Always `ERR_IO`.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::Io
    }
}

/// Why a goals file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// A line of a JSONL goals file is not `{"goal": …}`.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file has no goal.
    #[error("the goals file has no goal (one per line; `#` starts a comment)")]
    Empty,
}

impl BatchError {
    /// Always `ERR_INVALID_CONFIG`: the input is the user's.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidConfig
    }
}
