//! The binary interface: one `abi_stable` root module of byte-level calls.
//!
//! The root module is a *prefix type*: functions are only ever appended, in
//! a new minor version, after the `#[sabi(last_prefix_field)]` marker. A host
//! reading a plugin built for an older minor sees the newer functions as
//! absent (`None`) and reports them unavailable; layout and version checks
//! run when the library is loaded, before any call, against the layout of
//! the minor version the plugin declares (abi_stable itself only accepts a
//! library whose prefix is at least as long as the loader's; see `v1_0`).
//!
//! Every call takes and returns bytes of versioned documents
//! ([`crate::document`]) so that what evolves (IR, options, target
//! descriptions) never changes this layout. Memory returned by a plugin is
//! an `RVec`, freed by the allocator that made it.
//!
//! | ABI   | functions |
//! |-------|-----------|
//! | 1.0   | `abi_version`, `info`, `describe_target`, `compile` |
//! | 1.1   | `runtime` (devices, memory, load, launch, timing) |

// The `StableAbi` derive and `export_root_module` generate `unsafe` code
// (prefix-field accessors, the exported symbol); this module writes none.
#![allow(unsafe_code)]

use crate::document::{self, Document, Encoding, Version};
use crate::types::{
    CompileRequest, CompileResult, ErrorCode, PluginError, PluginInfo, RuntimeRequest,
    RuntimeResponse, TargetDescription,
};
use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RResult, RSlice, RStr, RVec};
use abi_stable::{StableAbi, declare_root_module_statics};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The ABI version this build of the crate speaks.
#[cfg(not(any(
    feature = "test-abi-1-0",
    feature = "test-abi-2-0",
    feature = "test-abi-1-2"
)))]
pub const ABI_VERSION: Version = Version::new(1, 1);
/// The ABI version this build of the crate speaks (test build: ABI 1.0).
#[cfg(feature = "test-abi-1-0")]
pub const ABI_VERSION: Version = Version::new(1, 0);
/// The ABI version this build of the crate speaks (test build: ABI 2.0).
#[cfg(all(feature = "test-abi-2-0", not(feature = "test-abi-1-0")))]
pub const ABI_VERSION: Version = Version::new(2, 0);
/// The ABI version this build of the crate speaks (test build: ABI 1.2, a
/// minor version newer than any host).
#[cfg(all(
    feature = "test-abi-1-2",
    not(any(feature = "test-abi-1-0", feature = "test-abi-2-0"))
))]
pub const ABI_VERSION: Version = Version::new(1, 2);

/// `ABI_VERSION` as the version string abi_stable checks at load.
#[cfg(not(any(
    feature = "test-abi-1-0",
    feature = "test-abi-2-0",
    feature = "test-abi-1-2"
)))]
const ABI_VERSION_STRINGS: VersionStrings = VersionStrings::new("1.1.0");
#[cfg(feature = "test-abi-1-0")]
const ABI_VERSION_STRINGS: VersionStrings = VersionStrings::new("1.0.0");
#[cfg(all(feature = "test-abi-2-0", not(feature = "test-abi-1-0")))]
const ABI_VERSION_STRINGS: VersionStrings = VersionStrings::new("2.0.0");
#[cfg(all(
    feature = "test-abi-1-2",
    not(any(feature = "test-abi-1-0", feature = "test-abi-2-0"))
))]
const ABI_VERSION_STRINGS: VersionStrings = VersionStrings::new("1.2.0");

/// The result of a byte-level call: a document, or an encoded
/// [`PluginError`].
pub type ByteResult = RResult<RVec<u8>, RVec<u8>>;

/// `major.minor` as it crosses the ABI.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiVersion {
    pub major: u16,
    pub minor: u16,
    /// Test build only: a field no host knows, so that the root module's
    /// layout differs from the one its version declares.
    #[cfg(feature = "test-layout-mismatch")]
    pub patch: u16,
}

/// The root module every plugin exports.
#[repr(C)]
#[derive(StableAbi, Debug)]
#[sabi(kind(Prefix(prefix_ref = BackendRef)))]
#[sabi(missing_field(option))]
pub struct Backend {
    /// The ABI version the plugin was built for.
    pub abi_version: extern "C" fn() -> AbiVersion,
    /// `PluginInfo`, in the encoding given by the byte (0 postcard, 1 JSON).
    pub info: extern "C" fn(encoding: u8) -> ByteResult,
    /// `TargetDescription` of one target.
    pub describe_target: extern "C" fn(arch: RStr<'_>, encoding: u8) -> ByteResult,
    /// A `CompileRequest` in, a `CompileResult` out (in the request's
    /// encoding).
    #[sabi(last_prefix_field)]
    pub compile: extern "C" fn(request: RSlice<'_, u8>) -> ByteResult,
    /// ABI 1.1: a `RuntimeRequest` in, a `RuntimeResponse` out.
    #[cfg(not(feature = "test-abi-1-0"))]
    pub runtime: extern "C" fn(request: RSlice<'_, u8>) -> ByteResult,
    /// Test build only (`test-abi-1-2`): a call of a minor version newer
    /// than any host, which hosts of 1.1 do not know.
    #[cfg(feature = "test-abi-1-2")]
    pub newer: extern "C" fn() -> u32,
}

impl RootModule for BackendRef {
    declare_root_module_statics! {BackendRef}
    const BASE_NAME: &'static str = "tilec_backend";
    const NAME: &'static str = "tilec backend plugin";
    const VERSION_STRINGS: VersionStrings = ABI_VERSION_STRINGS;
}

/// The root module as ABI 1.0 defined it, for checking plugins of that
/// minor version.
///
/// abi_stable lets a library's prefix type have *more* fields than the
/// loader's (a newer plugin in an older host), but refuses one with fewer
/// ("too many fields"). So a plugin that declares an older minor version is
/// checked against the layout of that minor, kept here under the same type
/// name, and the calls added later are reported unavailable. When a minor
/// version appends a call, keep the previous layout as another such module.
pub(crate) mod v1_0 {
    use super::{AbiVersion, ByteResult};
    use abi_stable::library::RootModule;
    use abi_stable::sabi_types::VersionStrings;
    use abi_stable::std_types::{RSlice, RStr};
    use abi_stable::{StableAbi, declare_root_module_statics};

    /// [`super::Backend`] without the calls added after ABI 1.0. The name
    /// must stay `Backend`: abi_stable compares type names.
    #[repr(C)]
    #[derive(StableAbi, Debug)]
    #[sabi(kind(Prefix(prefix_ref = BackendRef)))]
    #[sabi(missing_field(option))]
    pub struct Backend {
        pub abi_version: extern "C" fn() -> AbiVersion,
        pub info: extern "C" fn(encoding: u8) -> ByteResult,
        pub describe_target: extern "C" fn(arch: RStr<'_>, encoding: u8) -> ByteResult,
        #[sabi(last_prefix_field)]
        pub compile: extern "C" fn(request: RSlice<'_, u8>) -> ByteResult,
    }

    impl RootModule for BackendRef {
        declare_root_module_statics! {BackendRef}
        const BASE_NAME: &'static str = "tilec_backend";
        const NAME: &'static str = "tilec backend plugin";
        const VERSION_STRINGS: VersionStrings = VersionStrings::new("1.0.0");
    }
}

/// A plugin's root module after the load-time checks, as the layout of the
/// minor version it was checked against.
#[derive(Clone, Copy)]
pub(crate) enum CheckedRoot {
    /// Checked against this build's layout ([`Backend`]).
    Current(BackendRef),
    /// A plugin of ABI 1.0, checked against the 1.0 layout.
    V1_0(v1_0::BackendRef),
}

impl CheckedRoot {
    /// Checks the version and layout of the root module in `header` and
    /// initializes it. `plugin_minor` is the minor ABI version the library
    /// declares; the caller has already checked the major version.
    pub(crate) fn init(
        header: &abi_stable::library::LibHeader,
        plugin_minor: u16,
    ) -> Result<CheckedRoot, abi_stable::library::LibraryError> {
        // (Not when this build is itself at ABI 1.0, as a `test-abi-1-0` one.)
        if plugin_minor == 0 && ABI_VERSION.major == 1 && ABI_VERSION != Version::new(1, 0) {
            header
                .init_root_module::<v1_0::BackendRef>()
                .map(CheckedRoot::V1_0)
        } else {
            header
                .init_root_module::<BackendRef>()
                .map(CheckedRoot::Current)
        }
    }

    pub(crate) fn abi_version(self) -> extern "C" fn() -> AbiVersion {
        match self {
            CheckedRoot::Current(m) => m.abi_version(),
            CheckedRoot::V1_0(m) => m.abi_version(),
        }
    }

    pub(crate) fn info(self) -> extern "C" fn(encoding: u8) -> ByteResult {
        match self {
            CheckedRoot::Current(m) => m.info(),
            CheckedRoot::V1_0(m) => m.info(),
        }
    }

    pub(crate) fn describe_target(
        self,
    ) -> extern "C" fn(arch: RStr<'_>, encoding: u8) -> ByteResult {
        match self {
            CheckedRoot::Current(m) => m.describe_target(),
            CheckedRoot::V1_0(m) => m.describe_target(),
        }
    }

    pub(crate) fn compile(self) -> extern "C" fn(request: RSlice<'_, u8>) -> ByteResult {
        match self {
            CheckedRoot::Current(m) => m.compile(),
            CheckedRoot::V1_0(m) => m.compile(),
        }
    }

    /// The `runtime` call (ABI 1.1), or `None` for a plugin without it.
    pub(crate) fn runtime(self) -> Option<extern "C" fn(request: RSlice<'_, u8>) -> ByteResult> {
        match self {
            #[cfg(not(feature = "test-abi-1-0"))]
            CheckedRoot::Current(m) => m.runtime(),
            // A `test-abi-1-0` build stands for the crate at ABI 1.0, whose
            // root module has no `runtime` field.
            #[cfg(feature = "test-abi-1-0")]
            CheckedRoot::Current(_) => None,
            CheckedRoot::V1_0(_) => None,
        }
    }
}

/// What a backend implements, in safe Rust. [`crate::export_backend!`] turns
/// an implementation into the exported root module; every call runs inside
/// `catch_unwind`, so a panic becomes an [`ErrorCode::Panic`] error.
pub trait BackendPlugin: 'static {
    /// The backend name, when it is fixed at build time (it must then be
    /// the name `info` gives). [`crate::export_backend!`] writes it into the
    /// library's `.tilec_backend` section, where tilec reads it from the
    /// file without loading the library: a command for another backend
    /// then never loads this one. Empty (the default): not written, and
    /// tilec loads the library to learn its name.
    const NAME: &'static str = "";
    fn info() -> PluginInfo;
    fn describe_target(arch: &str) -> Result<TargetDescription, PluginError>;
    fn compile(request: CompileRequest) -> Result<CompileResult, PluginError>;
    /// The optional runtime. The default answers that there is none.
    fn runtime(request: RuntimeRequest) -> Result<RuntimeResponse, PluginError> {
        let _ = request;
        Err(PluginError::new(
            ErrorCode::NoDevice,
            "this plugin has no runtime",
        ))
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// Runs `f` behind the panic firewall and encodes its result.
fn firewall<T: Document>(
    encoding: Encoding,
    f: impl FnOnce() -> Result<T, PluginError>,
) -> ByteResult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(doc)) => RResult::ROk(document::encode(&doc, encoding).into()),
        Ok(Err(e)) => RResult::RErr(document::encode(&e, encoding).into()),
        Err(payload) => {
            let e = PluginError::new(ErrorCode::Panic, panic_message(&*payload));
            RResult::RErr(document::encode(&e, encoding).into())
        }
    }
}

fn bad_request(message: String) -> PluginError {
    PluginError::new(ErrorCode::BadRequest, message)
}

extern "C" fn abi_version_shim() -> AbiVersion {
    AbiVersion {
        major: ABI_VERSION.major,
        minor: ABI_VERSION.minor,
        #[cfg(feature = "test-layout-mismatch")]
        patch: 0,
    }
}

#[cfg(feature = "test-abi-1-2")]
extern "C" fn newer_shim() -> u32 {
    12
}

extern "C" fn info_shim<P: BackendPlugin>(encoding: u8) -> ByteResult {
    let enc = Encoding::from_byte(encoding).unwrap_or(Encoding::Postcard);
    firewall(enc, || Ok(P::info()))
}

extern "C" fn describe_target_shim<P: BackendPlugin>(arch: RStr<'_>, encoding: u8) -> ByteResult {
    let enc = Encoding::from_byte(encoding).unwrap_or(Encoding::Postcard);
    firewall(enc, || P::describe_target(arch.as_str()))
}

extern "C" fn compile_shim<P: BackendPlugin>(request: RSlice<'_, u8>) -> ByteResult {
    let bytes = request.as_slice();
    let enc = document::peek(bytes)
        .map(|p| p.2)
        .unwrap_or(Encoding::Postcard);
    firewall(enc, || {
        let req: CompileRequest =
            document::decode(bytes).map_err(|e| bad_request(e.to_string()))?;
        P::compile(req)
    })
}

#[cfg(not(feature = "test-abi-1-0"))]
extern "C" fn runtime_shim<P: BackendPlugin>(request: RSlice<'_, u8>) -> ByteResult {
    let bytes = request.as_slice();
    let enc = document::peek(bytes)
        .map(|p| p.2)
        .unwrap_or(Encoding::Postcard);
    firewall(enc, || {
        let req: RuntimeRequest =
            document::decode(bytes).map_err(|e| bad_request(e.to_string()))?;
        P::runtime(req)
    })
}

/// Builds the root module for `P`. Called once, by the exported function
/// that [`crate::export_backend!`] writes.
pub fn root_module<P: BackendPlugin>() -> BackendRef {
    use abi_stable::prefix_type::PrefixTypeTrait;
    Backend {
        abi_version: abi_version_shim,
        info: info_shim::<P>,
        describe_target: describe_target_shim::<P>,
        compile: compile_shim::<P>,
        #[cfg(not(feature = "test-abi-1-0"))]
        runtime: runtime_shim::<P>,
        #[cfg(feature = "test-abi-1-2")]
        newer: newer_shim,
    }
    .leak_into_prefix()
}

/// Exports a [`BackendPlugin`] implementation as this library's root
/// module. Use it once, in a `cdylib` crate:
///
/// ```ignore
/// struct MyBackend;
/// impl tilec_plugin_api::BackendPlugin for MyBackend { /* ... */ }
/// tilec_plugin_api::export_backend!(MyBackend);
/// ```
#[macro_export]
macro_rules! export_backend {
    ($plugin:ty) => {
        /// The backend name in the section tilec reads without loading the
        /// library (see `BackendPlugin::NAME`).
        #[used]
        #[allow(unsafe_code)]
        #[unsafe(link_section = ".tilec_backend")]
        static TILEC_BACKEND_NAME: [u8; <$plugin as $crate::BackendPlugin>::NAME.len()] =
            $crate::abi::name_bytes(<$plugin as $crate::BackendPlugin>::NAME);

        #[$crate::reexports::export_root_module]
        pub fn tilec_backend_root_module() -> $crate::abi::BackendRef {
            // Referenced from the exported function, so that the linker
            // keeps the section.
            ::std::hint::black_box(&TILEC_BACKEND_NAME);
            $crate::abi::root_module::<$plugin>()
        }
    };
}

/// The name of the ELF section holding a plugin's backend name
/// ([`BackendPlugin::NAME`]).
pub const NAME_SECTION: &str = ".tilec_backend";

/// `name` as a byte array, for the static [`crate::export_backend!`] writes.
pub const fn name_bytes<const N: usize>(name: &str) -> [u8; N] {
    let bytes = name.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N && i < bytes.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
}
