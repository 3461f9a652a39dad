//! The processor's features, asked for once on a thread that has time for it.
//!
//! The vectorised searches (memchr, the regex engines) read the standard library's record of
//! the processor's features, and SHA-256 keeps one of its own; each is filled the first time
//! it is read, with `cpuid` instructions. In a virtual machine each `cpuid` leaves for the
//! hypervisor: 13-16 µs apiece on the machine promptc is measured on, about 0.2 ms for the
//! dozen a run makes. Read where they are first needed, they fell on the load's thread (its
//! first template registered) and on both compile threads at once (the first `matching`
//! condition hashes its pattern). The command line fills both first on the thread that works
//! ahead ([`crate::ahead`]), before the schemas' patterns, while the load reads its files; a
//! program that embeds promptc fills them at its first compile, as before.

/// Fills the standard library's record of the processor's features (asking for one feature
/// detects them all) and SHA-256's.
pub fn detect_features() {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let _ = std::arch::is_x86_feature_detected!("avx2");
    }
    let _ = <sha2::Sha256 as sha2::Digest>::digest([]);
}
