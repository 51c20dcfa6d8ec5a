#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

extension Locale {
  /// Takes the person's locale (`LANG`, `LC_ALL`) for readline and the C library, as every
  /// terminal program must; when it is C or missing, characters are still read as UTF-8 (so
  /// Backspace after `é` removes the whole letter). Only the categories forum uses are loaded:
  /// characters (readline, the codeset) and the C library's messages; all thirteen read a dozen
  /// locale files at every start. Numbers, times and sorting stay C's (forum formats them itself).
  static func prepare() {
    setlocale(LC_CTYPE, "")
    setlocale(LC_MESSAGES, "")
    let codeset = String(cString: nl_langinfo(nl_item(CODESET)))
    if codeset.uppercased().replacing("-", with: "") != "UTF8" {
      for name in ["C.UTF-8", "en_US.UTF-8"] where setlocale(LC_CTYPE, name) != nil {
        // readline sets LC_CTYPE again from the environment when it starts, so the
        // environment says it too (LC_ALL, when set, wins over LC_CTYPE there).
        let variable = (getenv("LC_ALL").map { strlen($0) > 0 } ?? false) ? "LC_ALL" : "LC_CTYPE"
        setenv(variable, name, 1)
        break
      }
    }
  }
}
