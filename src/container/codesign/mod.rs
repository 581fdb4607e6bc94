//! Code signatures: the embedded Mach-O signature and PE Authenticode,
//! recomputed from the file's own bytes.
//!
//! This checks *integrity*, not *trust*: that the signed hashes still match
//! the bytes, and who the embedded certificates name. It does not check the
//! certificate chain against Apple's or Microsoft's roots, revocation or
//! timestamps, nor the CMS signature over the signed attributes; the reports
//! say so (`trust` field).
//!
//! Every length, offset and count read from the file is checked against the
//! bytes it points into; a malformed signature is a finding
//! ([`Status::Malformed`]), never a panic or an error that hides the rest of
//! the file's description.

mod cms_info;
mod macho;
mod pe;

use super::{ContainerInfo, Format};
use serde::Serialize;

/// Why a signature's structure cannot be read: the detail a
/// `malformed (…)` finding shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Malformed(std::borrow::Cow<'static, str>);

impl From<&'static str> for Malformed {
    fn from(detail: &'static str) -> Malformed {
        Malformed(detail.into())
    }
}

impl From<String> for Malformed {
    fn from(detail: String) -> Malformed {
        Malformed(detail.into())
    }
}

/// What kind of signature a file carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Mach-O `LC_CODE_SIGNATURE` (CodeDirectory + CMS).
    MachoCodeSignature,
    /// PE certificate table with a PKCS#7 Authenticode signature.
    Authenticode,
    /// The format has no signature (ELF, JavaScript, a bare payload) or
    /// the file carries none.
    None,
}

/// The verdict on the signature's hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Signed by a certificate and every hash matches.
    Valid,
    /// Ad-hoc signed (no certificate) and every hash matches.
    AdHoc,
    /// At least one signed hash no longer matches the bytes.
    Broken,
    /// No signature.
    Unsigned,
    /// The signature's structures cannot be read.
    Malformed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::AdHoc => "ad-hoc",
            Status::Broken => "broken",
            Status::Unsigned => "unsigned",
            Status::Malformed => "malformed",
        }
    }
}

/// One special slot of a CodeDirectory (a hash of a blob beside the code).
#[derive(Debug, Clone, Serialize)]
pub struct SpecialSlot {
    /// 1 = Info.plist, 2 = requirements, 5 = entitlements, 7 = DER entitlements, …
    pub slot: u32,
    pub name: &'static str,
    /// `matches`, `differs`, `empty` (zero hash, nothing bound), `missing`
    /// (a hash but no blob in the signature), `external` (bound to a file
    /// outside the executable, e.g. Info.plist of an app bundle: not checkable here).
    pub status: &'static str,
}

/// One CodeDirectory (a Mach-O slice may carry one per hash type).
#[derive(Debug, Clone, Serialize)]
pub struct CodeDirectory {
    pub hash_type: &'static str,
    pub version: String,
    /// Bytes per code page (0: the whole signed range is one page).
    pub page_size: u64,
    pub code_limit: u64,
    pub code_pages: u64,
    /// Pages whose hash no longer matches.
    pub pages_differ: u64,
    /// File offset (from the start of the file) of the first differing page.
    pub first_differing_offset: Option<u64>,
    pub special_slots: Vec<SpecialSlot>,
    /// The CodeDirectory's hash, truncated to 20 bytes as `codesign` shows it.
    pub cdhash: String,
}

/// The signature of one Mach-O slice.
#[derive(Debug, Clone, Serialize)]
pub struct MachoSlice {
    pub arch: String,
    /// File offset of the slice.
    pub offset: u64,
    pub status: Status,
    pub summary: String,
    pub identifier: Option<String>,
    pub team_id: Option<String>,
    pub flags: u32,
    pub flag_names: Vec<&'static str>,
    pub hardened_runtime: bool,
    pub code_directories: Vec<CodeDirectory>,
    /// Number of requirements in the requirement set, if any.
    pub requirements: Option<u32>,
    /// Entitlement keys (from the XML entitlements blob).
    pub entitlements: Vec<String>,
    /// Subjects of the certificates in the CMS blob, in stored order.
    pub certificates: Vec<String>,
    /// Subject of the certificate that signed (matched by issuer and serial).
    pub signer: Option<String>,
    /// The CMS signer's messageDigest attribute matches a CodeDirectory's
    /// hash (None: no CMS signer or no such attribute).
    pub cms_digest_matches: Option<bool>,
    /// File offset and size of the signature blob.
    pub signature_offset: u64,
    pub signature_size: u64,
    /// Bytes of the slice after the signature (not covered by it).
    pub trailing_bytes: u64,
}

/// The Authenticode facts of a PE file.
#[derive(Debug, Clone, Serialize)]
pub struct AuthenticodeFacts {
    pub digest_algorithm: String,
    pub signed_digest: String,
    pub computed_digest: String,
    /// The signer's certificate subject (matched by issuer and serial).
    pub signer: Option<String>,
    pub certificates: Vec<String>,
    /// File offset and size of the certificate table.
    pub table_offset: u64,
    pub table_size: u64,
    /// Where the certificate table sits relative to the Bun section.
    pub placement: String,
    /// Bytes after the certificate table (not covered by the digest).
    pub trailing_bytes: u64,
}

/// A file's signature, as `info --json` shows it in `.signature`.
#[derive(Debug, Clone, Serialize)]
pub struct Signature {
    pub kind: Kind,
    pub status: Status,
    /// One line: `valid`, `broken (3 pages differ: first at offset 4096)`, …
    pub summary: String,
    pub identifier: Option<String>,
    pub team_id: Option<String>,
    /// The CDHash of the slice read (Mach-O).
    pub cdhash: Option<String>,
    /// Subject of the signing certificate (the leaf).
    pub signer: Option<String>,
    /// What the check proves and what it does not.
    pub trust: &'static str,
    /// What was recomputed from the file's bytes and compared.
    pub checked: Vec<&'static str>,
    /// What was not checked: the certificate chain, so who signed.
    pub not_checked: Vec<&'static str>,
    /// Always false: `valid` says the hashes match, not who signed. The
    /// Team ID, identifier and signer are what the file claims; anyone can
    /// make a certificate that names any Team ID or organisation.
    pub identity_verified: bool,
    /// `verify --published`: this signature's code hash against the
    /// published build's (absent where the published build is not known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<PublishedSignature>,
    /// Mach-O: every slice's signature (one for a thin file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<MachoSlice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authenticode: Option<AuthenticodeFacts>,
}

pub const TRUST_NOTE: &str = "integrity only: the signed hashes were recomputed from the file; the certificate chain was not checked against the platform's roots, so the Team ID and signer are what the file claims, not proof of who signed it (anyone can make a certificate naming any Team ID); `verify --published` compares the signed hashes with the published build's";

/// What the Mach-O check recomputes.
pub(crate) const MACHO_CHECKED: &[&str] = &[
    "hash of every code page in the signed range",
    "hash of every special slot whose blob is in the signature",
    "CMS messageDigest against the CodeDirectories",
];
/// What the Authenticode check recomputes.
pub(crate) const PE_CHECKED: &[&str] = &["Authenticode digest of the file"];
/// What no check here does.
pub(crate) const NOT_CHECKED: &[&str] = &[
    "certificate chain to the platform's roots (who signed)",
    "CMS signature by the certificate's key",
    "revocation",
    "timestamp",
];

/// A signature against the published build's (`verify --published`).
#[derive(Debug, Clone, Serialize)]
pub struct PublishedSignature {
    /// What is compared: `cdhash` (Mach-O: the CodeDirectory, which holds
    /// every page's hash) or `authenticode-digest` (PE).
    pub compared: &'static str,
    /// This file's value and the published build's (None: that side has
    /// no signature).
    pub value: Option<String>,
    pub published: Option<String>,
    /// Both present and equal: the file is signed over the published
    /// build's code (with `status` valid, it is that code).
    pub matches: bool,
    pub published_signer: Option<String>,
    pub signer_matches: bool,
}

impl Signature {
    fn none(summary: &str) -> Signature {
        Signature {
            kind: Kind::None,
            status: Status::Unsigned,
            summary: summary.to_string(),
            identifier: None,
            team_id: None,
            cdhash: None,
            signer: None,
            trust: TRUST_NOTE,
            checked: Vec::new(),
            not_checked: Vec::new(),
            identity_verified: false,
            slices: Vec::new(),
            authenticode: None,
            published: None,
        }
    }

    /// The code hash `verify --published` compares: the CDHash (Mach-O) or
    /// the signed Authenticode digest (PE).
    fn code_hash(&self) -> (&'static str, Option<String>) {
        match self.kind {
            Kind::Authenticode => (
                "authenticode-digest",
                self.authenticode.as_ref().map(|a| a.signed_digest.clone()),
            ),
            _ => ("cdhash", self.cdhash.clone()),
        }
    }

    /// Compare with the published build's signature (nothing when neither
    /// is signed: an ELF build).
    pub fn compare_with_published(&mut self, published: &Signature) {
        if self.kind == Kind::None && published.kind == Kind::None {
            return;
        }
        let (compared, value) = self.code_hash();
        let (published_compared, published_value) = published.code_hash();
        let matches = compared == published_compared && value.is_some() && value == published_value;
        self.published = Some(PublishedSignature {
            compared,
            value,
            published: published_value,
            matches,
            published_signer: published.signer.clone(),
            signer_matches: self.signer == published.signer,
        });
    }

    /// One line for humans: `hashes match; signer not verified — claimed
    /// Team ID …, identifier …, CDHash …`. What the certificate names is
    /// said to be a claim: the chain is not checked.
    pub fn line(&self) -> String {
        let mut s = self.summary.clone();
        let mut extra = Vec::new();
        if let Some(t) = &self.team_id {
            extra.push(format!("claimed Team ID {t}"));
        }
        if let Some(i) = &self.identifier {
            extra.push(format!("identifier {i}"));
        }
        if let Some(c) = &self.cdhash {
            extra.push(format!("CDHash {c}"));
        }
        if self.team_id.is_none()
            && let Some(signer) = &self.signer
        {
            extra.push(format!("claimed signer {signer}"));
        }
        if !extra.is_empty() {
            s.push_str(&format!(" — {}", extra.join(", ")));
        }
        if let Some(p) = &self.published {
            s.push_str(&format!("; {}", p.line(self.status)));
        }
        s
    }
}

impl PublishedSignature {
    /// `CDHash matches the published build's`, or how it does not.
    pub fn line(&self, status: Status) -> String {
        let what = if self.compared == "cdhash" {
            "CDHash"
        } else {
            "Authenticode digest"
        };
        match (&self.value, &self.published) {
            (_, None) => format!("the published build carries no {what}"),
            (None, Some(p)) => format!("the published build's {what} is {p}; this file has none"),
            (Some(_), Some(_))
                if self.matches && matches!(status, Status::Valid | Status::AdHoc) =>
            {
                format!(
                    "{what} matches the published build's (the signed code is the published code)"
                )
            }
            (Some(_), Some(_)) if self.matches => format!(
                "{what} matches the published build's, but this file's bytes no longer match it"
            ),
            (Some(_), Some(p)) => format!(
                "{what} differs from the published build's ({p}): not the published signature"
            ),
        }
    }
}

/// Check the signature of `bytes`, a file whose container was read as `info`.
pub fn check(bytes: &[u8], info: &ContainerInfo) -> Signature {
    match info.format {
        Format::Macho => macho::check(bytes, info),
        Format::Pe => pe::check(bytes, info),
        Format::Elf => Signature::none("unsigned (ELF executables carry no code signature)"),
        Format::Js | Format::Raw => Signature::none("unsigned (not an executable)"),
    }
}

/// Check the signature of any file, reading its container only as far as
/// needed. For fuzzing and for files that hold no Bun payload.
pub fn check_bytes(bytes: &[u8]) -> Signature {
    let format = if bytes.starts_with(b"MZ") {
        Format::Pe
    } else if bytes.starts_with(b"\x7fELF") {
        Format::Elf
    } else if matches!(
        bytes.get(..4),
        Some([0xcf, 0xfa, 0xed, 0xfe] | [0xce, 0xfa, 0xed, 0xfe] | [0xca, 0xfe, 0xba, 0xbe])
    ) {
        Format::Macho
    } else {
        Format::Raw
    };
    let info = ContainerInfo {
        format,
        arch: None,
        slices: Vec::new(),
        placement: super::Placement::WholeFile,
        section: None,
        section_offset: 0,
        section_size: 0,
        header_width: None,
        payload_offset: 0,
        payload_size: 0,
    };
    check(bytes, &info)
}
