// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "forum",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "forum", targets: ["forum"]),
    .executable(name: "forum-bench", targets: ["forum-bench"]),
  ],
  targets: [
    // C libraries from Debian's -dev packages.
    .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(name: "CReadline", providers: [.apt(["libreadline-dev"])]),
    .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
    .systemLibrary(name: "CJPEG", providers: [.apt(["libjpeg-dev"])]),
    .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
    // libpng and libjpeg calls that need setjmp, which Swift cannot do.
    // The system-library module maps link only where Swift imports them, so the C target names
    // its libraries itself.
    .target(
      name: "CImageDecode", dependencies: ["CPNG", "CJPEG"],
      linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("jpeg")]),

    .target(name: "Datastore", dependencies: ["CSQLite", "CLibPQ"]),
    .target(name: "Forum", dependencies: ["Datastore"]),
    .target(name: "ForumCLI", dependencies: ["Forum", "CReadline", "CImageDecode"]),
    .executableTarget(name: "forum", dependencies: ["ForumCLI"]),
    .executableTarget(name: "forum-bench", dependencies: ["Forum", "Datastore", "CSQLite"]),

    // The throwaway PostgreSQL cluster every test target shares (started once per test process).
    .target(name: "PostgresTestCluster"),

    .testTarget(name: "DatastoreTests", dependencies: ["Datastore", "PostgresTestCluster"]),
    .testTarget(name: "ForumTests", dependencies: ["Forum", "Datastore", "PostgresTestCluster"]),
    .testTarget(
      name: "ForumCLITests",
      dependencies: ["ForumCLI", "Forum", "Datastore", "PostgresTestCluster"]),
  ],
  swiftLanguageModes: [.v5]
)
