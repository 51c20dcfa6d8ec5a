import Datastore
import Forum

/// What `forum list` and `forum show` read, as one `sqlite3` shell command each: the floor of a
/// one-shot command is the sqlite3 shell opening the same file and printing the same rows, with
/// the same read-access test and the authors' names joined in, through the same indexes.
struct ShellQueries {
  /// The 20 threads of the newest activity with their authors' names.
  let list: String
  /// The thread and its first 20 comments with their authors' names.
  let show: String

  init(board: Board, big: ForumThread) {
    let readable = { (table: String) in
      "(instr(\(table).readers, ' * ') > 0 OR instr(\(table).readers, ' \(board.me.objectId) ') > 0)"
    }
    let author = { (table: String) in
      "LEFT JOIN objects u ON u.objectId = json_extract(\(table).data, '$.user.objectId') "
        + "AND \(readable("u"))"
    }
    // The name shown for an author: the display name, else the user name.
    let name = "coalesce(json_extract(u.data, '$.displayName'), json_extract(u.data, '$.userName'))"
    list = """
      SELECT json_extract(t.data, '$.number'), json_extract(t.data, '$.title'), \
      json_extract(t.data, '$.description'), json_extract(t.data, '$.commentCount'), \
      json_extract(t.data, '$.lastActivity'), \(name) \
      FROM objects t \(author("t")) WHERE t.class = 'Thread' AND \(readable("t")) \
      ORDER BY json_extract(t.data, '$.lastActivity') DESC, t.id DESC LIMIT 20;
      """
    let pointer = JSONValue.pointer(className: "Thread", objectId: big.objectId).jsonText()
    show = """
      SELECT t.objectId, json_extract(t.data, '$.title'), json_extract(t.data, '$.description'), \
      json_extract(t.data, '$.commentCount'), \(name) \
      FROM objects t \(author("t")) WHERE t.class = 'Thread' \
      AND json_extract(t.data, '$.number') = \(big.number) AND \(readable("t"));
      SELECT json_extract(c.data, '$.number'), json_extract(c.data, '$.text'), c.createDate, \
      \(name) FROM objects c \(author("c")) \
      WHERE c.class = 'Comment' AND json_extract(c.data, '$.thread') = '\(pointer)' \
      AND \(readable("c")) ORDER BY json_extract(c.data, '$.number'), c.id LIMIT 20;
      """
  }
}
