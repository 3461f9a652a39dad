//! The processor's features, asked for once per process on a thread that has time for it.
//!
//! The vectorised searches (memchr, the regex engines) and SHA-256 ask the processor what it
//! supports the first time they run, with `cpuid` instructions, and remember the answer. In a
//! virtual machine each `cpuid` leaves for the hypervisor: 13-16 µs apiece on the machine
//! promptc is measured on, about 0.2 ms for the dozen a run makes. Asked where they are first
//! needed, they fell on the load's thread (its first template registered) and on both compile
//! threads at once (the first `matching` condition hashes its pattern); the thread that
//! builds the schemas' patterns ahead asks first, while the load reads its files.

/// Detects what the standard library's and SHA-256's fast paths look for.
pub fn detect_features() {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let _ = std::arch::is_x86_feature_detected!("avx2");
    }
    let _ = <sha2::Sha256 as sha2::Digest>::digest([]);
}
