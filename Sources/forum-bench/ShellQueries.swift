import Datastore
import Forum

/// What `forum list` and `forum show` read, as one `sqlite3` shell command each: the floor of a
/// one-shot command is the sqlite3 shell opening the same file and printing the same rows, with
/// the same read-access test and the authors' names joined in, through the same indexes.
struct ShellQueries {
  /// The 20 threads of the newest activity with their authors' names.
  let list: String
  /// The same with each thread's unread count, as `forum list` shows it: comments after the
  /// reader's position less the reader's own, the thread itself while never opened.
  let listWithUnread: String
  /// The thread and its first 20 comments with their authors' names.
  let show: String
  /// What `forum show` does for a reader going through the thread: the page after the read
  /// position, and the position moved past it (a write, as `show` makes when the page is new).
  let showAndMark: String

  init(board: Board, big: ForumThread) {
    let readable = { (table: String) in
      "(instr(\(table).readers, ' * ') > 0 OR instr(\(table).readers, ' \(board.myId) ') > 0)"
    }
    let author = { (table: String) in
      "LEFT JOIN objects u ON u.objectId = json_extract(\(table).data, '$.user.objectId') "
        + "AND \(readable("u"))"
    }
    // The name shown for an author: the display name, else the user name.
    let name = "coalesce(json_extract(u.data, '$.displayName'), json_extract(u.data, '$.userName'))"
    list = """
      SELECT json_extract(t.data, '$.number'), json_extract(t.data, '$.title'), \
      json_extract(t.data, '$.description'), json_extract(t.counts, '$.commentCount'), \
      json_extract(t.counts, '$.lastActivity'), \(name) \
      FROM objects t \(author("t")) WHERE t.class = 'Thread' AND \(readable("t")) \
      ORDER BY json_extract(t.counts, '$.lastActivity') DESC, t.id DESC LIMIT 20;
      """
    let me = board.myId
    let position = "coalesce(rp.position, 0)"
    let after = { (thread: String) in
      "c.class = 'Comment' AND json_extract(c.data, '$.thread') = json_object('__type', "
        + "'Pointer', 'className', 'Thread', 'objectId', \(thread)) "
        + "AND json_extract(c.data, '$.number') > \(position)"
    }
    listWithUnread = """
      SELECT json_extract(t.data, '$.number'), json_extract(t.data, '$.title'), \
      json_extract(t.data, '$.description'), json_extract(t.counts, '$.commentCount'), \
      json_extract(t.counts, '$.lastActivity'), \(name), \
      CASE WHEN \(position) >= json_extract(t.counts, '$.lastCommentNumber') THEN 0 ELSE min(1000, \
      (SELECT count(*) FROM objects c WHERE \(after("t.objectId"))) - \
      (SELECT count(*) FROM objects c WHERE json_extract(c.data, '$.user.objectId') = '\(me)' \
      AND \(after("t.objectId")))) END \
      + (rp.position IS NULL AND json_extract(t.data, '$.user.objectId') IS NOT '\(me)') \
      FROM objects t \(author("t")) \
      LEFT JOIN read_positions rp ON rp.userId = '\(me)' AND rp.object = t.objectId \
      WHERE t.class = 'Thread' AND \(readable("t")) \
      ORDER BY json_extract(t.counts, '$.lastActivity') DESC, t.id DESC LIMIT 20;
      """
    let pointer = JSONValue.pointer(className: "Thread", objectId: big.objectId).jsonText()
    show = """
      SELECT t.objectId, json_extract(t.data, '$.title'), json_extract(t.data, '$.description'), \
      json_extract(t.counts, '$.commentCount'), \(name) \
      FROM objects t \(author("t")) WHERE t.class = 'Thread' \
      AND json_extract(t.data, '$.number') = \(big.number) AND \(readable("t"));
      SELECT json_extract(c.data, '$.number'), json_extract(c.data, '$.text'), c.createDate, \
      \(name) FROM objects c \(author("c")) \
      WHERE c.class = 'Comment' AND json_extract(c.data, '$.thread') = '\(pointer)' \
      AND \(readable("c")) ORDER BY json_extract(c.data, '$.number'), c.id LIMIT 20;
      """
    let positionOfBig =
      "(SELECT position FROM read_positions WHERE userId = '\(me)' AND object = '\(big.objectId)')"
    showAndMark = """
      SELECT t.objectId, json_extract(t.data, '$.title'), json_extract(t.data, '$.description'), \
      json_extract(t.counts, '$.commentCount'), \(name), \(positionOfBig) \
      FROM objects t \(author("t")) WHERE t.class = 'Thread' \
      AND json_extract(t.data, '$.number') = \(big.number) AND \(readable("t"));
      SELECT json_extract(c.data, '$.number'), json_extract(c.data, '$.text'), c.createDate, \
      \(name) FROM objects c \(author("c")) \
      WHERE c.class = 'Comment' AND json_extract(c.data, '$.thread') = '\(pointer)' \
      AND json_extract(c.data, '$.number') > coalesce(\(positionOfBig), 0) \
      AND \(readable("c")) ORDER BY json_extract(c.data, '$.number'), c.id LIMIT 20;
      INSERT INTO read_positions(userId, object, position) VALUES ('\(me)', '\(big.objectId)', 20) \
      ON CONFLICT(userId, object) DO UPDATE SET position = position + 20;
      """
  }
}
