import Datastore
import Forum
import NCMBServer

extension NCMBPolicy {
  /// The board's checks on what apps send (`Board.checkAppFile`, `Board.checkAppObject`) and
  /// on what forum's remote engine sends (`Board.checkEngineObject`), and its objects' one
  /// JSON shape (`Board.objectShape`, as `--json` writes them): what `forum serve` gives its
  /// `NCMBService`.
  public static let board = NCMBPolicy(
    file: { _, bytes, mimeType in try Board.checkAppFile(bytes: bytes, mimeType: mimeType) },
    object: { className, fields, objectId, client in
      try Board.checkAppObject(
        className: className, fields: fields, objectId: objectId, client: client)
    },
    engineObject: { className, fields, objectId, client in
      try Board.checkEngineObject(
        className: className, fields: fields, objectId: objectId, client: client)
    }, shape: Board.objectShape, millisecondDates: Board.millisecondDates)
}
