// swift-tools-version:6.0
import PackageDescription

/// The Swift standard library and runtime linked statically (Linux; macOS has them in the OS).
/// FoundationEssentials' own static libraries are named here: modules compiled against the shared
/// runtime do not ask for them. The runtime is C++: `Linking/static-libstdc++` holds only
/// `libstdc++.a` and is searched first, so the runtime's `-lstdc++` takes the archive and no start
/// relocates libstdc++.so (4,300 symbol look-ups, about half of `forum --version`). Where that
/// link does not resolve (another GCC than Debian 12's), the shared library is linked as before;
/// `StartupTests` says so.
let staticSwift: [LinkerSetting] = [
  .unsafeFlags(
    [
      "-static-stdlib", "-l_FoundationCShims", "-l_FoundationCollections", "-lswiftSynchronization",
      "-L\(Context.packageDirectory)/Linking/static-libstdc++",
    ],
    .when(platforms: [.linux]))
]

/// A release `forum` carries no symbol table (8 MB of names; the debug build keeps them).
/// `FORUM_KEEP_SYMBOLS=1 swift build -c release` keeps it, for a profiler (`perf`, callgrind),
/// without the debug sections (valgrind 3.19 cannot read lld's).
///
/// It is linked by lld with its relative relocations packed (`DT_RELR`, glibc 2.36): a start
/// applies its 43,000 pointer fix-ups from a 9 KB bitmap instead of a 1 MB table, which took
/// `forum --version` from 1.48 to 1.30 million instructions (BENCHMARKS.md, S-rows).
let strippedRelease: [LinkerSetting] = [
  .unsafeFlags(
    [
      "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker",
      Context.environment["FORUM_KEEP_SYMBOLS"] != nil ? "--strip-debug" : "--strip-all",
    ], .when(platforms: [.linux], configuration: .release))
]

/// C libraries taken from their static archives on Linux (`-l:libX.a`, found on the library path
/// where Debian's -dev packages put them), in dependency order: a one-shot command then maps,
/// relocates and looks up symbols in none of them at start. libpq stays a shared library opened on
/// demand (see CLibPQ).
func archives(_ names: String...) -> [LinkerSetting] {
  names.map { .linkedLibrary(":lib\($0).a", .when(platforms: [.linux])) }
    + names.map { .linkedLibrary($0, .when(platforms: [.macOS])) }
}

let package = Package(
  name: "forum",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "forum", targets: ["forum"]),
    .executable(name: "forum-bench", targets: ["forum-bench"]),
    .executable(name: "bench-noop", targets: ["bench-noop"]),
    // The https board's HTTP client, next to `forum` (see CForumCurl).
    .library(name: "ForumCurl", type: .dynamic, targets: ["CForumCurl"]),
  ],
  targets: [
    // C libraries from Debian's -dev packages.
    // Their module maps name no library: the targets that import them link the archives.
    .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(name: "CReadline", providers: [.apt(["libreadline-dev"])]),
    .systemLibrary(name: "CNettle", providers: [.apt(["nettle-dev"])]),
    .systemLibrary(name: "CSodium", providers: [.apt(["libsodium-dev"])]),
    // The image libraries' headers only: CImageDecode opens the libraries at run time.
    .systemLibrary(name: "CPNG", providers: [.apt(["libpng-dev"])]),
    .systemLibrary(name: "CJPEG", providers: [.apt(["libjpeg-dev"])]),
    .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
    .systemLibrary(name: "CWebP", providers: [.apt(["libwebp-dev"])]),
    // libpng and libjpeg calls that need setjmp, which Swift cannot do, and the giflib and
    // libwebp decoders under the same budgets.
    // The four libraries are not linked: CImageDecode opens them with dlopen the first time a
    // picture of their format is decoded (Sources/CImageDecode/libraries.c), so a command that
    // shows no image does not map them, and Debian's security fixes to these parsers of hostile
    // input apply without rebuilding forum. Needs the -dev packages to build, libpng16-16,
    // libjpeg62-turbo, libgif7, libwebp7 and libwebpdemux2 to show images.
    .target(
      name: "CImageDecode", dependencies: ["CPNG", "CJPEG", "CGIF", "CWebP"],
      // Optimised in debug builds too: the decode time budget must mean the same in tests.
      cSettings: [.unsafeFlags(["-O2"])]),

    // libpq's header and a loader: libpq itself is opened with dlopen by the PostgreSQL engine
    // when a postgresql:// board is opened, so its 37 shared libraries do not load at every start.
    // Needs libpq-dev to build, libpq5 to open a PostgreSQL board.
    .target(name: "CLibPQ"),
    // HTTPS for the remote engine (an https:// board): libcurl is opened with dlopen on the first
    // request, so no other command maps it or its TLS library. Needs libcurl4-openssl-dev to
    // build, libcurl4 to open an https board.
    .target(name: "CCurl"),
    // libForumCurl.so, which CCurl opens before the system's libcurl.so.4: Debian's libcurl linked
    // from its archive (libcurl4-openssl-dev's libcurl.a) with only OpenSSL and zlib under it. The
    // shared libcurl brings thirty libraries for protocols an https board never uses (ssh, rtmp,
    // ldap, kerberos, a second TLS library), each built to bind every symbol when opened: 5.4 ms of
    // each remote command, against 1.9 here (BENCHMARKS.md R8). Those libraries' entry points are
    // stubs (`Scripts/curl-stubs`); OpenSSL stays Debian's shared one, so its security fixes apply
    // without a rebuild, libcurl's only with one (FORUM_LIBCURL=libcurl.so.4 uses the system's).
    .target(
      name: "CForumCurl", exclude: ["exports.map"],
      linkerSettings: [
        .unsafeFlags(
          [
            // C alone: neither Swift's start-up object nor its runtime (forum has its own linked
            // in; a second one would start beside it).
            "-nostartfiles", "-static-stdlib", "-no-stdlib-rpath",
            "-L\(Context.packageDirectory)/Linking/static-libstdc++",
            "-Xlinker", "--whole-archive", "-Xlinker", "-l:libcurl.a", "-Xlinker",
            "--no-whole-archive", "-Xlinker", "-lssl", "-Xlinker", "-lcrypto", "-Xlinker", "-lz",
            "-Xlinker",
            "--version-script=\(Context.packageDirectory)/Sources/CForumCurl/exports.map",
            "-Xlinker", "-z", "-Xlinker", "lazy",
            // No DWARF of the two small C files: valgrind 3.19 cannot read clang's and gives up
            // on the whole program (callgrind of a remote command, BENCHMARKS.md R8).
            "-Xlinker", "--strip-debug",
          ], .when(platforms: [.linux]))
      ]),
    // SHA-256, HMAC-SHA256 and base64 from nettle, and passwords hashed with Argon2id by
    // libsodium (`crypto_pwhash_str`), both linked from their archives: nothing is mapped at start.
    .target(
      name: "ForumCrypto", dependencies: ["CNettle", "CSodium"],
      linkerSettings: archives("nettle", "sodium")),
    // Every reason a failure gives, in English and Japanese side by side (below every layer:
    // the datastore, the board and the command line all refuse in its words).
    .target(name: "Refusals"),
    // SQLite's allocator and process-wide settings.
    .target(name: "CSQLiteMemory", dependencies: ["CSQLite"]),
    .target(
      name: "Datastore",
      dependencies: ["Refusals", "CSQLite", "CSQLiteMemory", "CLibPQ", "CCurl", "ForumCrypto"],
      linkerSettings: archives("sqlite3")),
    .target(name: "Forum", dependencies: ["Datastore", "Refusals"]),
    // libmicrohttpd (with GnuTLS) behind a small shim: opened with dlopen when `forum serve`
    // starts, so no other command maps it. Needs libmicrohttpd-dev to build, libmicrohttpd12 to
    // serve.
    .target(name: "CMicroHTTPD"),
    // The network door: NCMB's REST API over HTTP, above the Datastore (it knows no threads).
    .target(name: "NCMBServer", dependencies: ["Datastore", "ForumCrypto", "CMicroHTTPD"]),
    .target(
      name: "ForumCLI", dependencies: ["Forum", "NCMBServer", "CReadline", "CImageDecode"],
      linkerSettings: archives("readline", "tinfo")),
    // The Swift runtime linked in, so the program starts like a C tool: no dynamic loading and
    // relocation of libswiftCore and FoundationEssentials at every one-shot command.
    .executableTarget(
      name: "forum", dependencies: ["ForumCLI"], linkerSettings: staticSwift + strippedRelease),
    .executableTarget(
      name: "forum-bench",
      dependencies: [
        "Forum", "Datastore", "CSQLite", "CLibPQ", "HostileImages", "NCMBServer", "Spawning",
      ],
      // The bench's own PostgreSQL client calls libpq directly.
      linkerSettings: [.linkedLibrary("pq")]),
    // forum-bench's floor for process start: a Swift program that does nothing, linked like forum.
    .executableTarget(name: "bench-noop", linkerSettings: staticSwift + strippedRelease),
    // Generators of image bombs and honest huge pictures, for tests, fuzz seeds and benchmarks.
    .target(name: "HostileImages"),

    // The throwaway PostgreSQL cluster every test target shares (started once per test process).
    .target(name: "PostgresTestCluster"),
    // Child processes for the tests and the benchmark, without Foundation's Process (see there).
    .target(name: "CSpawn"),
    .target(name: "Spawning", dependencies: ["CSpawn"]),
    // The engines the Datastore and Board suites are parameterized over.
    .target(
      name: "EngineTestSupport",
      dependencies: ["Datastore", "PostgresTestCluster", "NCMBServer", "Spawning"],
      path: "Tests/EngineTestSupport"),
    .testTarget(
      name: "DatastoreTests",
      dependencies: ["Datastore", "EngineTestSupport", "PostgresTestCluster", "Spawning"]),
    .testTarget(
      name: "ForumTests",
      dependencies: [
        "Forum", "Datastore", "HostileImages", "EngineTestSupport", "PostgresTestCluster",
      ]),
    // Real HTTP clients (curl, the system python3) and throwaway certificates for the server's
    // tests.
    .target(
      name: "HTTPTestSupport", dependencies: ["Spawning"], path: "Tests/HTTPTestSupport"),
    .testTarget(
      name: "NCMBServerTests",
      dependencies: [
        "NCMBServer", "ForumCrypto", "Forum", "Datastore", "EngineTestSupport",
        "PostgresTestCluster", "HostileImages", "HTTPTestSupport",
      ]),
    .testTarget(
      name: "ForumCLITests",
      dependencies: [
        "ForumCLI", "Forum", "Datastore", "HostileImages", "CImageDecode", "PostgresTestCluster",
        "HTTPTestSupport", "Spawning", "CSpawn",
      ],
      exclude: ["Fixtures"]),
  ],
  swiftLanguageModes: [.v6]
)
