//! The real `carapi` binary against the spawned server (filled once the CLI lands).
