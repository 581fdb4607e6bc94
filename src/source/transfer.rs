//! How long a request to the registry may take, how slow its answer may
//! come and how large it may be.
//!
//! Reads have their own timeout, but a registry (or a proxy, or anything
//! the configuration points at) that sends one byte every few seconds never
//! trips it: without an overall deadline a fetch ran for ever and held its
//! version's lock all along. Every request now has a deadline and every
//! body a size cap; a tarball's deadline grows with its size, and a
//! download that falls under a minimum rate over a window is abandoned
//! long before that deadline.
//!
//! The figures are for real registries and real builds: the largest
//! tarball (a win32 or linux executable, 2.1.2xx) is about 100 MB and a
//! package's metadata under 1 MB; the slowest link we still serve is
//! 1 Mbit/s (128 KiB/s), at which such a tarball takes about 13 minutes.

use super::SourceError;
use std::time::{Duration, Instant};

/// The environment variable that changes the limits, for tests and
/// debugging only (`metadata=1.5,read=0.5,max_bytes=100000`).
pub const LIMITS_VAR: &str = "CC_TEARDOWN_NET_LIMITS";

/// The limits of one fetch's requests.
#[derive(Debug, Clone, PartialEq)]
pub struct NetLimits {
    /// Establishing a connection.
    pub connect: Duration,
    /// Waiting for any one read (a server silent this long is gone).
    pub read: Duration,
    /// A metadata request (a package or version document), redirects and
    /// body included.
    pub metadata: Duration,
    /// The largest metadata document read.
    pub max_metadata: u64,
    /// A tarball's response headers, per redirect hop.
    pub headers: Duration,
    /// A tarball's deadline is `tarball_base + size / tarball_rate`…
    pub tarball_base: Duration,
    pub tarball_rate: u64,
    /// …and never more than this (also the deadline when no size is known).
    pub tarball_cap: Duration,
    /// The largest tarball read (declared or not).
    pub max_tarball: u64,
    /// A body that averages under `min_rate` bytes a second over a window
    /// of this length is abandoned.
    pub window: Duration,
    pub min_rate: u64,
}

impl Default for NetLimits {
    fn default() -> NetLimits {
        NetLimits {
            connect: Duration::from_secs(30),
            read: Duration::from_secs(30),
            metadata: Duration::from_secs(60),
            max_metadata: 64 << 20,
            headers: Duration::from_secs(60),
            tarball_base: Duration::from_secs(60),
            tarball_rate: 128 << 10,
            tarball_cap: Duration::from_secs(25 * 60),
            max_tarball: 1 << 30,
            window: Duration::from_secs(30),
            min_rate: 32 << 10,
        }
    }
}

impl NetLimits {
    /// The defaults, changed by [`LIMITS_VAR`] when it is set.
    pub fn from_env() -> Result<NetLimits, SourceError> {
        match std::env::var(LIMITS_VAR) {
            Ok(spec) if !spec.trim().is_empty() => NetLimits::parse(&spec),
            _ => Ok(NetLimits::default()),
        }
    }

    /// `key=value` pairs separated by commas: durations in seconds
    /// (`connect`, `read`, `metadata`, `headers`, `base`, `cap`, `window`),
    /// rates in bytes a second (`rate`, `min_rate`), sizes in bytes
    /// (`max_metadata`, `max_bytes`).
    pub fn parse(spec: &str) -> Result<NetLimits, SourceError> {
        let bad = |why: String| SourceError::Network(format!("{LIMITS_VAR}: {why}"));
        let mut l = NetLimits::default();
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("{pair:?} is not key=value")))?;
            let (key, value) = (key.trim(), value.trim());
            let secs = || {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| bad(format!("{key}: {value:?} is not a number of seconds")))
            };
            let count = || {
                value
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad(format!("{key}: {value:?} is not a positive integer")))
            };
            match key {
                "connect" => l.connect = secs()?,
                "read" => l.read = secs()?,
                "metadata" => l.metadata = secs()?,
                "headers" => l.headers = secs()?,
                "base" => l.tarball_base = secs()?,
                "cap" => l.tarball_cap = secs()?,
                "window" => l.window = secs()?,
                "rate" => l.tarball_rate = count()?,
                "min_rate" => l.min_rate = count()?,
                "max_metadata" => l.max_metadata = count()?,
                "max_bytes" => l.max_tarball = count()?,
                _ => return Err(bad(format!("unknown key {key:?}"))),
            }
        }
        Ok(l)
    }

    /// How long a tarball of `size` bytes (when the server says) may take.
    pub fn tarball_deadline(&self, size: Option<u64>) -> Duration {
        let Some(size) = size else {
            return self.tarball_cap;
        };
        let transfer = Duration::from_secs_f64(size as f64 / self.tarball_rate as f64);
        (self.tarball_base.saturating_add(transfer)).min(self.tarball_cap)
    }
}

/// A number of seconds as the limits are given, to the millisecond
/// (`0.5 s`, `60 s`).
pub fn secs(d: Duration) -> String {
    format!("{} s", d.as_millis() as f64 / 1000.0)
}

/// Watches a body as it arrives: its deadline, its rate over each window,
/// its size. Checked after every read; a read itself waits at most
/// [`NetLimits::read`], so a body never runs past its deadline by more
/// than one read timeout.
pub struct BodyWatch<'a> {
    what: &'a str,
    limits: &'a NetLimits,
    started: Instant,
    deadline: Duration,
    max_bytes: u64,
    window_start: Instant,
    window_bytes: u64,
    pub received: u64,
}

impl<'a> BodyWatch<'a> {
    /// `what` names the request in errors (the URL's path); `started` is
    /// when the request was sent, so that time spent on headers and
    /// redirects counts.
    pub fn new(
        what: &'a str,
        limits: &'a NetLimits,
        started: Instant,
        deadline: Duration,
        max_bytes: u64,
    ) -> BodyWatch<'a> {
        BodyWatch {
            what,
            limits,
            started,
            deadline,
            max_bytes,
            window_start: Instant::now(),
            window_bytes: 0,
            received: 0,
        }
    }

    /// `n` more bytes arrived; an error when a limit is past. (Not called
    /// at the end of the body: a body complete is complete, however late.)
    pub fn arrived(&mut self, n: u64) -> Result<(), SourceError> {
        self.received = self.received.saturating_add(n);
        self.window_bytes = self.window_bytes.saturating_add(n);
        if self.received > self.max_bytes {
            return Err(SourceError::Network(format!(
                "GET {}: the body is larger than the {} bytes accepted",
                self.what, self.max_bytes
            )));
        }
        let now = Instant::now();
        if now.duration_since(self.started) > self.deadline {
            return Err(SourceError::Network(format!(
                "GET {}: not complete within its deadline of {} ({} bytes received)",
                self.what,
                secs(self.deadline),
                self.received
            )));
        }
        let spent = now.duration_since(self.window_start);
        if spent >= self.limits.window {
            let rate = self.window_bytes as f64 / spent.as_secs_f64();
            if rate < self.limits.min_rate as f64 {
                return Err(SourceError::Network(format!(
                    "GET {}: {:.0} bytes/s over the last {}, under the minimum of {} bytes/s",
                    self.what,
                    rate,
                    secs(spent.min(self.limits.window * 2)),
                    self.limits.min_rate
                )));
            }
            self.window_start = now;
            self.window_bytes = 0;
        }
        Ok(())
    }
}

/// The path of `url` (what errors name: the host comes from the user's
/// configuration and says nothing the user does not know).
pub fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// One line for a failed request: which path, and which limit it passed
/// when it was one of ours.
pub fn request_error(
    what: &str,
    e: ureq::Error,
    limits: &NetLimits,
    deadline: Duration,
) -> SourceError {
    use ureq::Timeout;
    let why = match e {
        ureq::Error::Timeout(Timeout::Global) => {
            format!("not complete within its deadline of {}", secs(deadline))
        }
        ureq::Error::Timeout(Timeout::PerRead) => {
            format!("nothing received for {} (read timeout)", secs(limits.read))
        }
        ureq::Error::Timeout(Timeout::RecvResponse) => {
            format!("no response headers within {}", secs(limits.headers))
        }
        ureq::Error::Timeout(Timeout::Connect) => {
            format!("no connection within {}", secs(limits.connect))
        }
        ureq::Error::BodyExceedsLimit(n) => {
            format!("the body is larger than the {n} bytes accepted")
        }
        e => e.to_string(),
    };
    SourceError::Network(format!("GET {what}: {why}"))
}

/// [`request_error`] for an error met while reading a body (ureq wraps its
/// own errors in `io::Error` there).
pub fn read_error(
    what: &str,
    e: std::io::Error,
    limits: &NetLimits,
    deadline: Duration,
) -> SourceError {
    request_error(what, ureq::Error::from(e), limits, deadline)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_read_from_the_variable_and_refuse_nonsense() {
        let l = NetLimits::parse("metadata=1.5, read=0.25,max_bytes=1000,rate=10").unwrap();
        assert_eq!(l.metadata, Duration::from_millis(1500));
        assert_eq!(l.read, Duration::from_millis(250));
        assert_eq!(l.max_tarball, 1000);
        assert_eq!(l.tarball_rate, 10);
        assert_eq!(l.connect, NetLimits::default().connect);
        for bad in [
            "metadata",
            "nope=1",
            "read=-1",
            "read=0",
            "max_bytes=1.5",
            "read=inf",
        ] {
            let e = NetLimits::parse(bad).unwrap_err().to_string();
            assert!(e.contains(LIMITS_VAR), "{bad}: {e}");
        }
    }

    #[test]
    fn a_tarball_deadline_grows_with_its_size_up_to_the_cap() {
        let l = NetLimits::default();
        // The largest real tarball, ~100 MB: 60 s + 763 s at 128 KiB/s.
        let real = l.tarball_deadline(Some(100_000_000));
        assert!(real > Duration::from_secs(800) && real < Duration::from_secs(830));
        assert_eq!(l.tarball_deadline(Some(0)), l.tarball_base);
        assert_eq!(l.tarball_deadline(Some(u64::MAX)), l.tarball_cap);
        assert_eq!(l.tarball_deadline(None), l.tarball_cap);
        // A waiting fetch outlives a holder at its deadline.
        assert!(l.tarball_cap < Duration::from_secs(30 * 60));
    }

    #[test]
    fn a_body_is_stopped_by_size_by_rate_and_by_deadline() {
        let l = NetLimits {
            window: Duration::from_millis(50),
            min_rate: 1000,
            ..NetLimits::default()
        };
        let now = Instant::now();
        let mut size = BodyWatch::new("/p.tgz", &l, now, Duration::from_secs(60), 10);
        assert!(size.arrived(10).is_ok());
        let e = size.arrived(1).unwrap_err().to_string();
        assert!(
            e.contains("/p.tgz") && e.contains("larger than the 10 bytes"),
            "{e}"
        );

        let mut slow = BodyWatch::new("/p.tgz", &l, now, Duration::from_secs(60), 1 << 20);
        std::thread::sleep(Duration::from_millis(60));
        let e = slow.arrived(1).unwrap_err().to_string();
        assert!(e.contains("under the minimum of 1000 bytes/s"), "{e}");

        let mut late = BodyWatch::new("/p.tgz", &l, now, Duration::from_millis(1), 1 << 20);
        std::thread::sleep(Duration::from_millis(5));
        let e = late.arrived(1).unwrap_err().to_string();
        assert!(e.contains("deadline of 0.001 s"), "{e}");
    }

    #[test]
    fn errors_name_the_path_not_the_host() {
        assert_eq!(url_path("http://127.0.0.1:9/a%2fb/1.0.0"), "/a%2fb/1.0.0");
        assert_eq!(url_path("https://host.invalid"), "/");
    }
}
