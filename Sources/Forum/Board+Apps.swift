import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The board's checks on what apps send through `forum serve`, beyond the engine's rules: the
/// same field rules and image checks a post from the prompt passes.
extension Board {
  /// How large an app may make its user object (its fields as JSON): every listing of people
  /// reads users.
  public static let maximumUserBytes = 8192

  /// What one object of the board's own classes (`boardClasses`) may cost a reader, as an app
  /// leaves it: its fields' `JSONValue.readingCost` (JSON bytes plus 64 a value). A thread's
  /// 10,000-character description is at most 40,000 bytes of UTF-8 (80,000 escaped), and a page
  /// of 100 such objects stays under the server's 16 MiB answer budget, so that no app user
  /// can make the board's listings too large to answer.
  public static let maximumAppObjectCost = 131_072

  /// A file an app uploads is a thread's picture: it must pass the board's image checks, and is
  /// stored with its metadata stripped. Throws `ImageRejection` with a one-line reason.
  public static func checkAppFile(bytes: [UInt8], mimeType: String) throws -> (
    bytes: [UInt8], mimeType: String
  ) {
    let image = try ImagePreparer.prepare(Data(bytes))
    return ([UInt8](image.data), image.format.mimeType)
  }

  /// The fields of a Thread, Comment, Message or user an app writes, checked and cleaned as the prompt's
  /// are; a Thread's `image` facts are the board's, read from the file its `fileName` names.
  public static func checkAppObject(
    className: String, fields: [String: JSONValue], objectId: String?, client: DatastoreClient
  ) throws -> [String: JSONValue] {
    var fields = fields
    let creating = objectId == nil
    func text(_ field: String) throws -> String? {
      guard let value = fields[field] else { return nil }
      guard let text = value.stringValue else { throw DatastoreError(.invalid, field: field) }
      return text
    }
    switch className {
    case threadClass:
      guard fields["image"] == nil else {
        throw DatastoreError(.invalid, field: "image", reason: BoardReason.imageIsTheBoards)
      }
      if creating || fields["title"] != nil {
        fields["title"] = .string(try PostRules.title(try text("title") ?? ""))
      }
      if creating || fields["description"] != nil {
        fields["description"] = .string(try PostRules.description(try text("description") ?? ""))
      }
      if let name = try text("fileName") {
        guard creating else {
          throw DatastoreError(
            .invalid, field: "fileName", reason: BoardReason.threadKeepsItsPicture)
        }
        let bytes: [UInt8]
        do {
          bytes = try client.getFile(name: name)
        } catch let error as DatastoreError where error.code == .notFound {
          throw DatastoreError(
            .notFound, field: "fileName", reason: BoardReason.noSuchPicture(name: name))
        }
        let image = try ImagePreparer.prepare(Data(bytes))
        fields["image"] = ImageSummary(fileName: name, image: image).json
      }
    case commentClass:
      if creating || fields["text"] != nil {
        fields["text"] = .string(try PostRules.comment(try text("text") ?? ""))
      }
    case messageClass:
      if creating || fields["text"] != nil {
        fields["text"] = .string(try PostRules.message(try text("text") ?? ""))
      }
    case User.className:
      if let name = try text("displayName") {
        fields["displayName"] = .string(try PostRules.displayName(name))
      }
      // Everyone's listings show users: their objects stay small whatever an app keeps there.
      var merged = try client.currentUser().object.fields
      for (key, value) in fields { merged[key] = value == .null ? nil : value }
      let bytes = JSONValue.object(merged).jsonBytes().count
      if bytes > maximumUserBytes {
        let field = fields.keys.filter { $0 != "displayName" }.sorted().first ?? "displayName"
        throw DatastoreError(
          .invalid, field: field,
          reason: BoardReason.tooManyBytes(field: "user", bytes: bytes, limit: maximumUserBytes))
      }
    default: break
    }
    if boardClasses.contains(className) {
      try checkAppObjectCost(className: className, fields: fields, objectId: objectId, client)
    }
    return fields
  }

  /// The checks of `checkAppObject` on what forum's remote engine writes (`forum serve` has
  /// them for `X-Forum-Wire: 1` and `forum/perform`, which anyone with the keys may send). The
  /// one write of the board's own an app may not make, a thread with its picture's facts, is
  /// let through with the facts read again from the stored file: only the client's list of
  /// the metadata it removed before the upload is kept, when it is a short list of names.
  public static func checkEngineObject(
    className: String, fields: [String: JSONValue], objectId: String?, client: DatastoreClient
  ) throws -> [String: JSONValue] {
    var fields = fields
    var removedMetadata: JSONValue?
    if className == threadClass, objectId == nil, fields["fileName"] != nil {
      removedMetadata = fields.removeValue(forKey: "image")?.objectValue?["removedMetadata"]
    }
    fields = try checkAppObject(
      className: className, fields: fields, objectId: objectId, client: client)
    if case .array(let names)? = removedMetadata, names.count <= 8,
      names.allSatisfy(isMetadataName), case .object(var image)? = fields["image"]
    {
      image["removedMetadata"] = .array(names)
      fields["image"] = .object(image)
    }
    return fields
  }

  /// A name `ImagePreparer` gives removed metadata ("Exif", "XMP", "APP1"…).
  private static func isMetadataName(_ value: JSONValue) -> Bool {
    guard let name = value.stringValue, (1...16).contains(name.utf8.count) else { return false }
    return name.utf8.allSatisfy {
      (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        || $0 == UInt8(ascii: "_")
    }
  }

  /// Refuses (`E400002` on `object`) a write that leaves an object of a board class costing
  /// more than `maximumAppObjectCost` to read, unless it makes an object stored bigger before
  /// the limit no bigger.
  static func checkAppObjectCost(
    className: String, fields: [String: JSONValue], objectId: String?, _ client: DatastoreClient
  ) throws {
    func cost(_ fields: [String: JSONValue]) -> Int {
      JSONValue.readingCost(JSONValue.object(fields).jsonText())
    }
    var merged = fields
    var before = 0
    if let objectId {
      let stored = try client.get(className, objectId: objectId).fields
      before = cost(stored)
      merged = stored
      for (key, value) in fields { merged[key] = value == .null ? nil : value }
    }
    let after = cost(merged)
    guard after > maximumAppObjectCost, after > before else { return }
    throw DatastoreError(
      .invalid, field: "object",
      reason: BoardReason.tooCostlyToRead(cost: after, limit: maximumAppObjectCost))
  }
}
