//! What goes wrong with a configuration value, with the variable it came from.

use camino::Utf8PathBuf;
use papayu_protocol::ErrorCode;

/// A configuration value that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A variable holds a value of the wrong shape.
    #[error("ERR_INVALID_CONFIG: {variable}={value:?}: {message}")]
    Invalid {
        /// The variable's name, e.g. `PAPAYU_TRACE`.
        variable: String,
        /// The value as given (never an API key).
        value: String,
        /// What was expected.
        message: String,
    },
    /// Something needed is not configured.
    #[error("ERR_INVALID_CONFIG: {variable} is not set: {message}")]
    Missing {
        /// The variable that would provide it.
        variable: String,
        /// What it is needed for.
        message: String,
    },
    /// A config file holds a value of the wrong shape.
    #[error("ERR_INVALID_CONFIG: {path}: {key} = {value:?}: {message}")]
    InFile {
        /// The file.
        path: Utf8PathBuf,
        /// The dotted key, e.g. `llm.temperature`.
        key: String,
        /// The value as written.
        value: String,
        /// What was expected.
        message: String,
    },
    /// A config file cannot be read, is not TOML, or cannot be written.
    #[error("ERR_INVALID_CONFIG: {path}: {message}")]
    File {
        /// The file.
        path: Utf8PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A key papayu does not know (`papayu config show` lists them).
    #[error("ERR_INVALID_CONFIG: {}unknown key `{key}` (`papayu config show` lists every key)", .path.as_ref().map(|p| format!("{p}: ")).unwrap_or_default())]
    UnknownKey {
        /// The file that holds it, if it came from one.
        path: Option<Utf8PathBuf>,
        /// The key.
        key: String,
    },
    /// A config file holds a secret: API keys stay in the environment.
    #[error(
        "ERR_SECRET_IN_CONFIG: {path}: `{key}` must not be in a config file; API keys stay in the environment: put the key in a variable and name it with llm.api_key_env = \"OPENAI_API_KEY\""
    )]
    SecretInFile {
        /// The file.
        path: Utf8PathBuf,
        /// The key.
        key: String,
    },
    /// A value to be written to a config file looks like an API key or another secret.
    #[error(
        "ERR_SECRET_IN_CONFIG: refusing to write `{key}`: the value looks like an API key or another secret, and config files never hold one; put it in an environment variable and name that variable with llm.api_key_env"
    )]
    SecretInValue {
        /// The key.
        key: String,
    },
}

impl ConfigError {
    /// [`ErrorCode::SecretInConfig`] for a secret in (or on its way to) a file, else
    /// [`ErrorCode::InvalidConfig`].
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::SecretInFile { .. } | Self::SecretInValue { .. } => ErrorCode::SecretInConfig,
            _ => ErrorCode::InvalidConfig,
        }
    }

    /// The variable (or config key) the error is about; for a file error, the file.
    pub fn variable(&self) -> &str {
        match self {
            Self::Invalid { variable, .. } | Self::Missing { variable, .. } => variable,
            Self::InFile { key, .. }
            | Self::UnknownKey { key, .. }
            | Self::SecretInFile { key, .. }
            | Self::SecretInValue { key } => key,
            Self::File { path, .. } => path.as_str(),
        }
    }

    /// The same error about `name` (a config key or a flag) instead of the variable.
    pub fn renamed(self, name: &str) -> ConfigError {
        match self {
            Self::Invalid { value, message, .. } => Self::Invalid {
                variable: name.to_owned(),
                value,
                message,
            },
            Self::Missing { message, .. } => Self::Missing {
                variable: name.to_owned(),
                message,
            },
            other => other,
        }
    }
}

pub(super) fn invalid(variable: &str, value: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        variable: variable.to_owned(),
        value: value.to_owned(),
        message: message.into(),
    }
}
