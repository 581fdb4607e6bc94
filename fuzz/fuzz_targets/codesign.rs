//! Code signatures (Mach-O SuperBlob/CodeDirectory/CMS, PE Authenticode)
//! from arbitrary bytes: every outcome is a `Signature` value, never a
//! panic, and the summary is one line.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = cc_teardown::container::codesign::check_bytes(data);
    assert!(!s.summary.contains('\n'));
});
