/// The board's storage bound per member (`mod storage-per-member`): `member_storage_bytes` in
/// `forum.meta`, which the storage triggers hold members' own writes to (schema step 22; 0 is
/// none) and `forum serve` its app users' (with its `--storage-per-user`, the smaller counts).
extension PostgresEngine {
  func memberStorageBytes(as caller: Principals) throws -> Int? {
    let result = try run("SELECT value FROM forum.meta WHERE key = 'member_storage_bytes'")
    guard result.rowCount > 0, let bytes = result.text(0, 0).flatMap({ Int($0) }), bytes > 0
    else { return nil }
    return bytes
  }

  func setMemberStorageBytes(_ bytes: Int?, as caller: Principals) throws {
    try act(as: caller)
    try write {
      _ = try run(sql: "SELECT forum.set_member_storage_bytes(\(Int64(bytes ?? 0))::bigint)")
    }
  }
}
