"""The outbound policy: which addresses the server may connect to when it calls a URL someone configured.

A trainer sets an http ranker's URL, and the server (web process and workers) POSTs to it. Without a
policy that is a server-side request forgery: the URL could name the cloud metadata service, or a
database or admin port on the server's own network. The rule, for every address the server connects to:

- **always refused**: link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10,
  100.100.100.200, fd00:ec2::254), and addresses no one should connect to (unspecified, multicast,
  reserved, broadcast);
- **loopback and private networks** (127.0.0.0/8, ::1, 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7,
  0.0.0.0/8, ...; anything not globally routable) only when the setting ``OUTBOUND_ALLOW_PRIVATE`` is on
  (default off; ``make run`` and the test suite turn it on, so a ranker_server on 127.0.0.1 works);
- everything else (public addresses) allowed.

The check is made **after DNS resolution, on the addresses actually connected to**
(``GuardedNetworkBackend``): a host name is resolved once, every address it resolves to must pass (one
refused address refuses the host), and the connection goes to a checked address, so a name that resolves
differently at connect time (DNS rebinding) can't slip through. IPv4-mapped IPv6 addresses
(``::ffff:169.254.169.254``) are checked as the IPv4 address they carry. Redirects are never followed
(``guarded_client``), and proxies from the environment are not used (they would connect for us).

``check_url`` applies the same rule to a URL whose host is an address literal (config validation, before
anything is saved); a host name is checked when it is connected to.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import typing
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Always refused, whatever the setting: link-local (where cloud metadata services live) and the metadata
# addresses outside it (Alibaba Cloud's 100.100.100.200, AWS's IPv6 fd00:ec2::254).
ALWAYS_REFUSED = tuple(
    ipaddress.ip_network(n)
    for n in ("169.254.0.0/16", "fe80::/10", "100.100.100.200/32", "fd00:ec2::254/128")
)


class OutboundRefused(Exception):
    """The outbound policy refuses to connect to this address (the message says which and why)."""


def allow_private() -> bool:
    return bool(getattr(settings, "OUTBOUND_ALLOW_PRIVATE", False))


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (IPv4-mapped, 6to4, NAT64), which it reaches."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal(address: IPAddress, *, private_allowed: bool | None = None) -> str | None:
    """Why the policy refuses ``address``, or None when it may be connected to."""
    if private_allowed is None:
        private_allowed = allow_private()
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = refusal(embedded, private_allowed=private_allowed)
        if reason is not None or isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            return reason
    if any(address in network for network in ALWAYS_REFUSED if network.version == address.version):
        return f"{address} is a link-local or cloud metadata address, which is never allowed"
    if address.is_multicast or address == ipaddress.IPv4Address("255.255.255.255"):
        return f"{address} is a multicast or broadcast address, which is never allowed"
    if address.is_loopback or address.is_private or address.is_unspecified or not address.is_global:
        if private_allowed:
            return None
        return (
            f"{address} is a loopback or private-network address, allowed only when the "
            "OUTBOUND_ALLOW_PRIVATE setting is on"
        )
    if address.is_reserved:
        return f"{address} is a reserved address, which is never allowed"
    return None


def check_address(address: str) -> None:
    """Raise OutboundRefused unless the address (an IP literal) may be connected to."""
    reason = refusal(ipaddress.ip_address(address))
    if reason is not None:
        raise OutboundRefused(f"refused by the outbound policy: {reason}")


def check_url(url: str) -> None:
    """Raise OutboundRefused when the URL's host is an address literal (or "localhost") the policy
    refuses. Host names are resolved and checked when connected to (``GuardedNetworkBackend``)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        host = "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return
    check_address(str(address))


def resolve_checked(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, all of them allowed by the policy (else OutboundRefused)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise httpcore.ConnectError(f"cannot resolve {host!r}: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        check_address(address.split("%")[0])  # a scope id (fe80::1%eth0) is not part of the address
    return addresses


class GuardedNetworkBackend(httpcore.SyncBackend):
    """httpcore's network backend, connecting only to addresses the policy allows (checked after
    resolution; the connection goes to a checked address, never to a second resolution)."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = resolve_checked(host, port)
        last: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:
                last = exc
        raise last if last is not None else httpcore.ConnectError(f"no address for {host!r}")


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's CAs), made once: loading the CAs takes ~20 ms of CPU, which
    every new client otherwise spends again. One context serves any number of connections."""
    return httpx.create_ssl_context()


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport over ``GuardedNetworkBackend``."""

    def __init__(self, **kwargs: typing.Any) -> None:
        kwargs.setdefault("verify", _tls_context())
        super().__init__(**kwargs)
        # httpx has no parameter for httpcore's network backend; its pool reads this attribute on connect.
        self._pool._network_backend = GuardedNetworkBackend()


def guarded_client(**kwargs: typing.Any) -> httpx.Client:
    """An httpx client for URLs someone configured: the outbound policy on every connection, no
    redirects followed, no proxies from the environment. ``transport=`` replaces the guarded one (tests)."""
    limits = kwargs.pop("limits", httpx.Limits())
    transport = kwargs.pop("transport", None) or GuardedTransport(limits=limits)
    return httpx.Client(transport=transport, follow_redirects=False, trust_env=False, **kwargs)
