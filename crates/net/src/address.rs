//! Which IP addresses are not the public internet.
//!
//! Invariant: an address that reaches the host itself, its private networks or the cloud
//! metadata service has a reason here in every spelling: IPv4, and the IPv6 forms that embed an
//! IPv4 address (mapped, compatible, NAT64, 6to4).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not a public one (so the guarded egress refuses it unless the operator
/// allowed it), or `None` for a public address.
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address (this includes the cloud metadata service)")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a carrier-grade NAT address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if ip.is_broadcast() || a >= 240 {
        Some("a reserved address")
    } else if a == 192 && b == 0 && c == 0 {
        Some("an IETF protocol address")
    } else if a == 198 && (18..20).contains(&b) {
        Some("a benchmarking address")
    } else {
        None
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    if let Some(v4) = embedded_v4(ip) {
        return forbidden_v4(v4);
    }
    match ip.segments()[0] {
        s if s & 0xfe00 == 0xfc00 => Some("a private (unique local) address"),
        s if s & 0xffc0 == 0xfe80 => Some("a link-local address"),
        s if s & 0xffc0 == 0xfec0 => Some("a site-local address"),
        s if s & 0xff00 == 0xff00 => Some("a multicast address"),
        _ => None,
    }
}

/// The IPv4 address an IPv6 address stands for: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:aabb:ccdd::`).
pub(crate) fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let o = ip.octets();
    let low = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if o[..12] == [0; 12] {
        return Some(low);
    }
    if o[..12] == [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] {
        return Some(low);
    }
    if o[..2] == [0x20, 0x02] {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_addresses() {
        for text in [
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.0.1",
            "100.64.0.1",
            "100.127.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:0001::",
            "2002:c0a8:0101::1",
        ] {
            let ip: IpAddr = text.parse().unwrap();
            assert!(forbidden_reason(ip).is_some(), "{text} should be forbidden");
        }
    }

    #[test]
    fn public_addresses() {
        for text in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.1",
            "172.15.0.1",
            "172.32.0.1",
            "192.169.0.1",
            "169.253.0.1",
            "198.20.0.1",
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:0808:0808::",
        ] {
            let ip: IpAddr = text.parse().unwrap();
            assert_eq!(forbidden_reason(ip), None, "{text} should be allowed");
        }
    }
}
