//! Sets the cfg `carapi_pg` when `DATABASE_URL` names a PostgreSQL server at build time, and
//! `carapi_pg_bin` when PostgreSQL's server programs (`/usr/lib/postgresql/<version>/bin`, with
//! `initdb` and `pg_ctl`) are installed: the integration tests that need them are built ignored
//! without them (and show so), instead of passing without running.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(carapi_pg)");
    println!("cargo::rustc-check-cfg=cfg(carapi_pg_bin)");
    println!("cargo::rerun-if-env-changed=DATABASE_URL");
    println!("cargo::rerun-if-changed=/usr/lib/postgresql");
    if std::env::var("DATABASE_URL").is_ok_and(|u| !u.trim().is_empty()) {
        println!("cargo::rustc-cfg=carapi_pg");
    }
    let has_bin = std::fs::read_dir("/usr/lib/postgresql").is_ok_and(|versions| {
        versions.flatten().any(|v| {
            let bin = v.path().join("bin");
            bin.join("initdb").exists() && bin.join("pg_ctl").exists()
        })
    });
    if has_bin {
        println!("cargo::rustc-cfg=carapi_pg_bin");
    }
}
