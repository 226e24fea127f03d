// The Swift snippet of ApplePlatforms.md, verbatim (its `import Combine` is left out: Linux has no
// Combine, and the snippet's point is that the qualified name compiles whatever else is imported).

import RefreshQueue

func refreshedProfileName(_ authentication: MyAuthentication) -> RefreshQueue.Future<String> {
    authentication.refresh().map { _ in "refreshed" }
}
