import Foundation

/// Adds this machine to `no_proxy` and `NO_PROXY`, for this process and the workers it starts.
///
/// Every request of the walkthrough goes to this machine. On Linux, URLSession sends even those
/// through the proxy that `http_proxy` or `all_proxy` names, unless `no_proxy` lists the host;
/// RefreshQueue then refuses to sign them (the token would reach the proxy unencrypted), and the
/// walkthrough, which needs no network, would fail for want of one. A `no_proxy` of `*` already
/// keeps every host off proxies and is left as it is.
func keepThisMachineOffProxies() {
    for name in ["no_proxy", "NO_PROXY"] {
        let current = ProcessInfo.processInfo.environment[name] ?? ""
        if current == "*" { continue }
        let hosts = current.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let missing = ["127.0.0.1", "localhost"].filter { !hosts.contains($0) }
        guard !missing.isEmpty else { continue }
        setenv(name, (hosts.filter { !$0.isEmpty } + missing).joined(separator: ","), 1)
    }
}
