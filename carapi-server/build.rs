//! Sets the cfg `carapi_pg` when `DATABASE_URL` names a PostgreSQL server at build time: the
//! integration tests that need PostgreSQL are built ignored without it (and show so), instead
//! of passing without running.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(carapi_pg)");
    println!("cargo::rerun-if-env-changed=DATABASE_URL");
    if std::env::var("DATABASE_URL").is_ok_and(|u| !u.trim().is_empty()) {
        println!("cargo::rustc-cfg=carapi_pg");
    }
}
