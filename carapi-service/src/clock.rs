//! The service's clock: every time-based rule reads it (a test double moves it).

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};

/// Source of the current instant (a fixed or movable one in tests).
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>);

impl Clock {
    /// The system clock.
    pub(crate) fn system() -> Self {
        Clock(Arc::new(Utc::now))
    }

    /// A clock driven by `f`.
    pub fn from_fn(f: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> Self {
        Clock(Arc::new(f))
    }

    /// The current instant.
    pub fn now(&self) -> DateTime<Utc> {
        (self.0)()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Relogio")
    }
}
