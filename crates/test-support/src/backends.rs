//! The backend matrix: a test that needs a test server is reported as ignored, never passed, when
//! the server's variable was unset while the tests were built, and fails when the variable is set
//! but the server does not answer. `.ci/run` exports every variable, so CI runs the whole matrix.
//!
//! The build script turns each set variable into a `cfg` of this crate, which picks what the
//! `needs!` macro expands to; this crate is a dev-dependency only, so changing a variable
//! rebuilds the tests, not the libraries.

/// A test server a test may need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// `WORKMATE_TEST_POSTGRES_URL`.
    Postgres,
    /// `WORKMATE_TEST_MYSQL_URL` (MariaDB or MySQL).
    Mysql,
    /// `WORKMATE_TEST_REDIS_URL`.
    Redis,
    /// `WORKMATE_TEST_NATS_URL`.
    Nats,
}

impl Backend {
    /// The environment variable holding the server's URL.
    pub fn variable(self) -> &'static str {
        match self {
            Self::Postgres => "WORKMATE_TEST_POSTGRES_URL",
            Self::Mysql => "WORKMATE_TEST_MYSQL_URL",
            Self::Redis => "WORKMATE_TEST_REDIS_URL",
            Self::Nats => "WORKMATE_TEST_NATS_URL",
        }
    }

    /// Whether the variable was set when the tests were built (so the tests needing this server
    /// are not ignored).
    pub fn built_in(self) -> bool {
        match self {
            Self::Postgres => cfg!(workmate_test_postgres),
            Self::Mysql => cfg!(workmate_test_mysql),
            Self::Redis => cfg!(workmate_test_redis),
            Self::Nats => cfg!(workmate_test_nats),
        }
    }

    /// The backend whose variable is `variable`.
    ///
    /// # Panics
    /// When `variable` names no test server.
    #[allow(
        clippy::panic,
        reason = "a test asked for a server that does not exist"
    )]
    pub fn from_variable(variable: &str) -> Self {
        [Self::Postgres, Self::Mysql, Self::Redis, Self::Nats]
            .into_iter()
            .find(|b| b.variable() == variable)
            .unwrap_or_else(|| panic!("{variable} names no test server"))
    }

    /// The server's URL. A test needing this server runs only when the variable was set at build
    /// time (otherwise it is ignored), so an unset variable here is a failure, not a skip.
    ///
    /// # Panics
    /// When the variable is unset or empty.
    #[allow(clippy::panic, reason = "a test that cannot run must fail, not pass")]
    pub fn url(self) -> String {
        match std::env::var(self.variable()) {
            Ok(url) if !url.is_empty() => url,
            _ => panic!(
                "{} is unset: set it to the test server's URL (or run without --ignored)",
                self.variable()
            ),
        }
    }
}

/// Declares test items (`#[test]`/`#[tokio::test]` functions) that need the named test servers
/// (`postgres`, `mysql`, `redis`, `nats`): each is ignored, naming the first unset variable, when a
/// server's variable was unset at build time.
///
/// ```ignore
/// workmate_test_support::needs! { [postgres, redis]
///     #[test]
///     fn two_replicas_share_a_turn() {}
/// }
/// ```
#[macro_export]
macro_rules! needs {
    ([] $($item:item)*) => { $($item)* };
    ([postgres $(, $rest:ident)*] $($item:item)*) => {
        $crate::__needs_postgres! { [$($rest),*] $($item)* }
    };
    ([mysql $(, $rest:ident)*] $($item:item)*) => {
        $crate::__needs_mysql! { [$($rest),*] $($item)* }
    };
    ([redis $(, $rest:ident)*] $($item:item)*) => {
        $crate::__needs_redis! { [$($rest),*] $($item)* }
    };
    ([nats $(, $rest:ident)*] $($item:item)*) => {
        $crate::__needs_nats! { [$($rest),*] $($item)* }
    };
}

// One step of `needs!` per server: when its variable was set the items go on to the next server;
// otherwise they are ignored here, naming the variable.

#[cfg(workmate_test_postgres)]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_postgres {
    ([$($rest:ident),*] $($item:item)*) => { $crate::needs! { [$($rest),*] $($item)* } };
}

#[cfg(not(workmate_test_postgres))]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_postgres {
    ([$($rest:ident),*] $($item:item)*) => {
        $(#[ignore = "WORKMATE_TEST_POSTGRES_URL is unset"] $item)*
    };
}

#[cfg(workmate_test_mysql)]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_mysql {
    ([$($rest:ident),*] $($item:item)*) => { $crate::needs! { [$($rest),*] $($item)* } };
}

#[cfg(not(workmate_test_mysql))]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_mysql {
    ([$($rest:ident),*] $($item:item)*) => {
        $(#[ignore = "WORKMATE_TEST_MYSQL_URL is unset"] $item)*
    };
}

#[cfg(workmate_test_redis)]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_redis {
    ([$($rest:ident),*] $($item:item)*) => { $crate::needs! { [$($rest),*] $($item)* } };
}

#[cfg(not(workmate_test_redis))]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_redis {
    ([$($rest:ident),*] $($item:item)*) => {
        $(#[ignore = "WORKMATE_TEST_REDIS_URL is unset"] $item)*
    };
}

#[cfg(workmate_test_nats)]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_nats {
    ([$($rest:ident),*] $($item:item)*) => { $crate::needs! { [$($rest),*] $($item)* } };
}

#[cfg(not(workmate_test_nats))]
#[doc(hidden)]
#[macro_export]
macro_rules! __needs_nats {
    ([$($rest:ident),*] $($item:item)*) => {
        $(#[ignore = "WORKMATE_TEST_NATS_URL is unset"] $item)*
    };
}
