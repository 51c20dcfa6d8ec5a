extension Messages {
  /// A decoder's library that cannot be loaded: what to install, with dlopen's reason.
  func imageLibraryUnavailable(_ missing: ImageLibraryUnavailable) -> String {
    let package = missing.package
    return japanese
      ? "画像を扱うには \(package) が必要ですが、読み込めません (\(missing.reason))。"
        + "インストールしてください (Debian: apt-get install \(package))"
      : "images need \(package), which cannot be loaded (\(missing.reason)); "
        + "install it (Debian: apt-get install \(package))"
  }
}
