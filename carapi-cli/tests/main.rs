//! Integration tests of the `carapi` binary: the real binary (assert_cmd) against the real
//! reference server spawned in-process on a random port over a temporary SQLite store.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod analyst;
mod archive;
mod batch;
mod batch_outputs;
mod consultas;
mod conta;
mod credentials;
mod harness;
mod help;
mod house;
mod local;
mod money;
mod portuguese;
mod recarga;
mod screen;
mod terminal;
mod truth;
mod vigiar;
mod vocabulary;
mod width;
