//! Turns each test-server variable set at build time into a `cfg`, so the macros in
//! `backends.rs` mark a test needing an unset server as ignored rather than letting it pass.

const BACKENDS: [(&str, &str); 4] = [
    ("WORKMATE_TEST_POSTGRES_URL", "workmate_test_postgres"),
    ("WORKMATE_TEST_MYSQL_URL", "workmate_test_mysql"),
    ("WORKMATE_TEST_REDIS_URL", "workmate_test_redis"),
    ("WORKMATE_TEST_NATS_URL", "workmate_test_nats"),
];

fn main() {
    for (variable, cfg) in BACKENDS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        println!("cargo::rerun-if-env-changed={variable}");
        if std::env::var_os(variable).is_some_and(|v| !v.is_empty()) {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
