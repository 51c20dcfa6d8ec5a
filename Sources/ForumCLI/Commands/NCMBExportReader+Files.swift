import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// An entry of `files.json`, as checked.
struct NCMBFileEntry {
  let name: String
  let mimeType: String
  let acl: ACL
  let createDate: Int64
  let updateDate: Int64
  let datesGiven: Bool
}
/// The files of an export (`files.json` and `files/`).
extension NCMBExportReader {
  mutating func readFiles(_ plan: inout ImportPlan) {
    let folder = directory + "/files"
    let root = realPath(folder)
    var seen = Set<String>()
    var entries: [NCMBFileEntry] = []
    forEach("files.json") { reader, fields, index in
      guard let name = fields["fileName"]?.stringValue else {
        reader.problem(
          reader.messages.importMissingField("files.json #\(index + 1)", "fileName"))
        return
      }
      let at = "files.json \(name)"
      let path = folder + "/" + name
      // A name naming a place outside DIR/files (`../x`, a link out of it) is refused.
      let outside =
        name.contains("/") || name == ".." || name == "."
        || (access(path, F_OK) == 0
          && !(reader.realPath(path) ?? "").hasPrefix((root ?? "\u{0}") + "/"))
      guard !outside else {
        reader.problem(reader.messages.importEscapes(at))
        return
      }
      guard seen.insert(name).inserted else {
        reader.problem(reader.messages.importDuplicate("files.json", name))
        return
      }
      guard
        let bytes = reader.readBounded(
          path, limit: reader.store.fileSizeLimit, shown: "files/" + name)
      else { return }
      if let size = fields["fileSize"]?.intValue, size != Int64(bytes.count) {
        reader.problem(
          reader.messages.importBadField(
            at, "fileSize", "says \(size), files/\(name) has \(bytes.count)"))
        return
      }
      var acl = ACL.publicReadWrite
      if let given = fields["acl"] {
        do {
          acl = try ACL(json: given)
        } catch {
          reader.problem(reader.messages.importBadField(at, "acl", reader.describe(error)))
          return
        }
      }
      let mimeType = fields["mimeType"]?.stringValue ?? "application/octet-stream"
      let entry: NCMBFileEntry
      do {
        let prepared = try Board.checkAppFile(bytes: bytes, mimeType: mimeType)
        // An entry without dates is written with the run's time and, on a later run, compared
        // without them (`ImportedFile.datesGiven`): the time of a run made it a conflict.
        let now = BackendDate.now()
        var dates: [Int64] = []
        var datesGiven = true
        for field in ["createDate", "updateDate"] {
          let text = fields[field]?.stringValue ?? fields[field]?.objectValue?["iso"]?.stringValue
          let date = text.flatMap(NCMBDate.milliseconds)
          if date == nil { datesGiven = false }
          dates.append(date ?? now)
        }
        entry = NCMBFileEntry(
          name: name, mimeType: prepared.mimeType, acl: acl, createDate: dates[0],
          updateDate: dates[1], datesGiven: datesGiven)
        reader.pictures[name] = try BoardImport.imageFacts(fileName: name, bytes: bytes)
        guard
          reader.checked(
            .file(
              ImportedFile(
                name: name, mimeType: prepared.mimeType, bytes: prepared.bytes, acl: acl,
                createDate: dates[0], updateDate: dates[1], datesGiven: datesGiven)),
            "files \(name)")
        else { return }
      } catch let rejection as ImageRejection {
        reader.problem(
          reader.messages.importBadField(
            at, "file", rejection.wording.text(japanese: reader.messages.japanese)))
        return
      } catch {
        reader.problem(reader.messages.importBadField(at, "file", reader.describe(error)))
        return
      }
      entries.append(entry)
    }
    // Each file is its own transaction (their lines are added up under "files").
    plan.batches += entries.map { .file($0) }
  }

  /// The file of `entry`, read and prepared again as it was checked.
  func fileItem(_ entry: NCMBFileEntry) throws -> ImportItem {
    let path = directory + "/files/" + entry.name
    guard let data = FileManager.default.contents(atPath: path),
      data.count <= store.fileSizeLimit
    else { throw CLIError.failed(messages.importChanged("files/" + entry.name)) }
    let prepared = try Board.checkAppFile(bytes: [UInt8](data), mimeType: entry.mimeType)
    return .file(
      ImportedFile(
        name: entry.name, mimeType: prepared.mimeType, bytes: prepared.bytes, acl: entry.acl,
        createDate: entry.createDate, updateDate: entry.updateDate, datesGiven: entry.datesGiven))
  }

  private func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
