//! The HTTP agent behind every call workmem makes to a provider: the LLM client's and the
//! proxy's upstream.

use std::net::{IpAddr, SocketAddr};
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// An agent on `config`, ureq's own but for how it finds a host's address ([`Literal`]).
pub fn http_agent(config: Config) -> ureq::Agent {
    ureq::Agent::with_parts(config, DefaultConnector::new(), Literal::default())
}

/// ureq's resolver, but a host given as an IP address is taken as it is. ureq resolves the
/// host before every request, a connection kept alive or not, and with a deadline (every
/// request of workmem's has one) on a thread it starts for that request: a thread started and
/// ended per request to a local model or a proxy's loopback upstream, only to read back the
/// address it was given. A name is still looked up as ureq looks it up.
#[derive(Debug, Default)]
struct Literal(DefaultResolver);

impl Resolver for Literal {
    fn resolve(&self, uri: &Uri, config: &Config, timeout: NextTimeout) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let Some(addr) = literal(uri) else { return self.0.resolve(uri, config, timeout) };
        let mut found = self.empty();
        for addr in config.ip_family().keep_wanted(std::iter::once(addr)) {
            found.push(addr);
        }
        // As ureq's: an address of a family the config leaves out is no address.
        if found.is_empty() { Err(ureq::Error::HostNotFound) } else { Ok(found) }
    }
}

/// The socket address `uri` names by IP (an IPv6 one in brackets), its port or its scheme's;
/// none for a name, or a scheme other than HTTP's (left to ureq, which refuses it).
fn literal(uri: &Uri) -> Option<SocketAddr> {
    let default_port = match uri.scheme_str()? {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let host = uri.host()?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let ip: IpAddr = host.parse().ok()?;
    Some(SocketAddr::new(ip, uri.port_u16().unwrap_or(default_port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IP is its own address, with the URL's port or its scheme's; a name, or a scheme
    /// ureq does not speak, is left to ureq.
    #[test]
    fn an_ip_is_taken_as_it_is() {
        let addr = |url: &str| literal(&url.parse().unwrap());
        assert_eq!(addr("http://127.0.0.1:8080/v1"), Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(addr("https://10.0.0.2/v1/chat/completions"), Some("10.0.0.2:443".parse().unwrap()));
        assert_eq!(addr("http://[::1]/v1"), Some("[::1]:80".parse().unwrap()));
        assert_eq!(addr("http://[fe80::1]:9/"), Some("[fe80::1]:9".parse().unwrap()));
        assert_eq!(addr("http://localhost:8080/v1"), None);
        assert_eq!(addr("https://api.openai.com/v1"), None);
        assert_eq!(addr("http://1.2.3.4.example:80/"), None);
        assert_eq!(addr("ftp://127.0.0.1/"), None);
    }

    /// Through the resolver: the family the config asks for is kept, as ureq keeps it; a name
    /// is looked up by ureq's own.
    #[test]
    fn the_resolver_keeps_the_family_and_looks_names_up() {
        let resolve = |url: &str, family| {
            let config = ureq::Agent::config_builder().ip_family(family).build();
            Literal::default().resolve(&url.parse().unwrap(), &config, NextTimeout::default()).map(|found| found.to_vec())
        };
        use ureq::config::IpFamily;
        assert_eq!(resolve("http://[::1]:5/", IpFamily::Any).unwrap(), vec!["[::1]:5".parse::<SocketAddr>().unwrap()]);
        assert!(matches!(resolve("http://[::1]:5/", IpFamily::Ipv4Only), Err(ureq::Error::HostNotFound)));
        assert!(resolve("http://localhost:5/", IpFamily::Ipv4Only).unwrap().iter().all(|a| a.ip().is_loopback() && a.is_ipv4()));
    }
}
