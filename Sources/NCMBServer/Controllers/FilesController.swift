import Datastore

/// `files[/NAME]`: NCMB's file store (search, upload as multipart, the bytes, the ACL, delete).
struct FilesController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard let name = call.route.names.first else {
      guard call.method == "GET" else { throw NCMBError.method }
      return try search(call)
    }
    let client = call.client
    switch call.method {
    case "POST":
      return try upload(call, name)
    case "GET":
      try FilesController.checkFileName(name)
      let info = try client.fileInfo(name: name)
      let bytes = try client.getFile(name: name)
      return HTTPResponse(
        status: 200, headers: [(name: "content-type", value: info.mimeType)], body: bytes)
    case "PUT":
      // NCMB's file update: the ACL only (the bytes of a stored file never change).
      try FilesController.checkFileName(name)
      let info = try client.setFileACL(name: name, acl: try FilesController.newACL(call.request))
      return NCMBService.json(.object(["updateDate": NCMBJSON.date(info.updateDate)]))
    case "DELETE":
      try FilesController.checkFileName(name)
      try client.deleteFile(name: name)
      return NCMBService.deleted
    default:
      throw NCMBError.method
    }
  }

  /// NCMB's file search (`GET /files`): the metadata of the files the caller may read, with the
  /// parameters and errors of an object query (`where` over `fileName`, `mimeType`,
  /// `fileSize`, `createDate`, `updateDate`).
  private func search(_ call: NCMBCall) throws -> HTTPResponse {
    let search = try NCMBQuery.query(
      className: "file", try NCMBQuery.parameters(call.request.rawQuery))
    var body: [String: JSONValue] = [:]
    let found = search.listsNothing ? [] : try call.client.findFiles(search.query)
    body["results"] = .array(found.map { call.answersInWire ? $0.wire : $0.json })
    if search.withCount {
      body["count"] = .int(Int64(try call.client.countFiles(search.query)))
    }
    return NCMBService.json(.object(body))
  }

  /// The ACL a file update sets: `{"acl":{…}}` (the Swift, iOS and JS SDKs), or the multipart
  /// body of the file's upload sent again (the Unity SDK's `NCMBFile.SaveAsync` on a file saved
  /// before): its `acl` part is taken and its `file` part ignored, as NCMB's file update changes
  /// the ACL only — the stored bytes may differ from the app's copy (the board strips a
  /// picture's metadata), so they are not compared. No `acl` is `E400003`.
  static func newACL(_ request: HTTPRequest) throws -> ACL {
    if let boundary = try MultipartForm.boundary(
      contentType: request.header(lowercased: "content-type"))
    {
      let form = try MultipartForm(request.body, boundary: boundary)
      guard let part = form["acl"], !part.bytes.isEmpty else { throw NCMBError.empty("acl") }
      return try ACL(json: NCMBJSON.parse(Array(part.bytes)))
    }
    var fields = try NCMBJSON.object(request.body)
    guard let given = fields.removeValue(forKey: "acl") else { throw NCMBError.empty("acl") }
    if let other = fields.keys.sorted().first {
      throw NCMBError.invalid(other, "only a file's acl can be changed")
    }
    return try ACL(json: given)
  }

  /// A file as the SDKs send it: a `multipart/form-data` body with a `file` part and an
  /// optional `acl` part (a plain field or a file part, before or after the file), or the
  /// bytes alone with their Content-Type.
  private func upload(_ call: NCMBCall, _ name: String) throws -> HTTPResponse {
    let request = call.request
    var bytes = request.body
    var mimeType = request.header(lowercased: "content-type") ?? "application/octet-stream"
    var acl: ACL?
    if let boundary = try MultipartForm.boundary(contentType: mimeType) {
      let form = try MultipartForm(request.body, boundary: boundary)
      guard let file = form["file"] else { throw NCMBError.empty("file") }
      bytes = Array(file.bytes)
      mimeType = file.contentType ?? "application/octet-stream"
      if let part = form["acl"], !part.bytes.isEmpty {
        acl = try ACL(json: NCMBJSON.parse(Array(part.bytes)))
      }
    }
    let client = call.client
    // None sent: everyone reads, the uploader alone writes, as for an object with an author
    // (with NCMB's public write anyone could take a thread's picture over or delete it).
    if acl == nil, let userId = client.userId { acl = .publicRead(owner: userId) }
    guard bytes.count <= call.store.fileSizeLimit else { throw NCMBError.fileTooLarge }
    guard !bytes.isEmpty else { throw NCMBError.empty("file") }
    try FilesController.checkFileName(name)
    do {
      (bytes, mimeType) = try call.policy.checkedFile(name, bytes, mimeType)
    } catch let error as DatastoreError {
      throw NCMBError(error)
    }
    // The file's bytes count toward the uploader's storage (issue 28 H5).
    let info = try ObjectsController.withinStorage(call) {
      try client.putFile(name: name, bytes: bytes, mimeType: mimeType, acl: acl)
    }
    guard !call.answersInWire else { return NCMBService.json(info.wire, status: 201) }
    return NCMBService.json(
      .object(["fileName": .string(info.fileName), "createDate": NCMBJSON.date(info.createDate)]),
      status: 201)
  }

  /// `/`, `..`, a NUL and anything outside `[A-Za-z0-9._-]` are refused before the datastore.
  static func checkFileName(_ name: String) throws {
    let allowed = name.utf8.allSatisfy {
      (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
    }
    guard allowed, !name.isEmpty, name.utf8.count <= 200, !name.contains("..") else {
      throw NCMBError.invalid("fileName")
    }
  }
}
