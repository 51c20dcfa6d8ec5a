#if canImport(FoundationEssentials)
  import Glibc
#else
  import Foundation
#endif

extension ObjectShape {
  /// `write(row.object(acl:))` written from the row's stored text, building no field: true when
  /// written. False, and nothing written, when the text holds anything `CanonicalJSON` does not
  /// take, a counter that is an object or null (merged, not replaced), or, as apps are answered,
  /// a relation (its members are left out): the caller builds the object and writes that.
  /// `acl` is the row's ACL as `write(_:ACL)` writes it.
  func write(stored row: StoredObject, acl: [UInt8], to out: inout [UInt8]) -> Bool {
    write(stored: row, declared: classes[row.className], acl: acl, to: &out)
  }

  /// The same with the row's class's declaration looked up already (`classes[row.className]`:
  /// a page's rows are mostly of one class).
  func write(
    stored row: StoredObject, declared: ClassShape?, acl: [UInt8], to out: inout [UInt8]
  ) -> Bool {
    var data = row.data
    var counts = row.counts ?? ""
    return data.withUTF8 { data in
      counts.withUTF8 { counts in
        if hidesFromApps
          && (ObjectShape.holds("Relation", data) || ObjectShape.holds("Relation", counts))
        {
          return false
        }
        let mark = out.count
        guard
          write(
            row, declared: declared, acl: acl, data: data,
            counts: row.counts == nil ? nil : counts, to: &out)
        else {
          out.removeSubrange(mark...)
          return false
        }
        return true
      }
    }
  }

  private static func holds(_ word: StaticString, _ text: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = text.baseAddress else { return false }
    let length = word.utf8CodeUnitCount
    var from = 0
    while text.count - from >= length,
      let found = memchr(base + from, Int32(word.utf8Start[0]), text.count - from - length + 1)
    {
      let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
      if memcmp(base + at, word.utf8Start, length) == 0 { return true }
      from = at + 1
    }
    return false
  }

  /// A member of the object written: a stored field (its value as written aside), one of its
  /// date fields as NCMB's Date, or what the datastore adds.
  private struct Written {
    enum Value {
      case stored(Range<Int>)
      /// A date field: `{"__type":"Date","iso":…}`.
      case date(Int64)
      /// `createDate` or `updateDate`: the ISO text alone.
      case isoText(Int64)
      case objectId
      case acl
    }
    let key: UnsafeBufferPointer<UInt8>
    let value: Value
  }

  private func write(
    _ row: StoredObject, declared: ClassShape?, acl: [UInt8], data: UnsafeBufferPointer<UInt8>,
    counts: UnsafeBufferPointer<UInt8>?, to out: inout [UInt8]
  ) -> Bool {
    let dropsAuthData = hidesFromApps && row.className == User.className
    var members: [Written] = []
    members.reserveCapacity(16)
    // Each stored value written aside once, as it will stand, then copied in key order.
    var values: [UInt8] = []
    values.reserveCapacity(data.count + (counts?.count ?? 0))
    // The stored fields: `data`'s, then the counters over them (a key in both: the counter's).
    var reader = CanonicalJSON(bytes: data)
    for isCounts in [false, true] {
      guard let text = isCounts ? counts : data else { continue }
      reader.bytes = text
      guard let (found, end) = reader.members(at: reader.skipSpace(0), depth: 1, into: &values),
        reader.skipSpace(end) == text.count
      else { return false }
      for member in found {
        let key = UnsafeBufferPointer(rebasing: text[member.key])
        if isCounts {
          switch reader.at(member.value) {
          case UInt8(ascii: "{"), UInt8(ascii: "n"): return false
          default: members.removeAll { ObjectShape.equal($0.key, key) }
          }
        }
        if ObjectShape.systemKeys.contains(where: { ObjectShape.equal($0, key) }) { continue }
        if dropsAuthData && ObjectShape.equal("authData", key) { continue }
        if let declared {
          if declared.hiddenFields.contains(where: { ObjectShape.equal($0, key) }) { continue }
          if declared.dateFields.contains(where: { ObjectShape.equal($0, key) }),
            let end = reader.wholeNumber(at: member.value)
          {
            members.append(Written(key: key, value: .date(reader.integer(member.value, end))))
            continue
          }
        }
        members.append(Written(key: key, value: .stored(member.written)))
      }
    }
    func system(_ name: StaticString, _ value: Written.Value) {
      let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
      let hidden = declared?.hiddenFields ?? []
      guard !hidden.contains(where: { ObjectShape.equal($0, key) }) else { return }
      members.append(Written(key: key, value: value))
    }
    system("acl", .acl)
    system("createDate", .isoText(row.createDate))
    system("objectId", .objectId)
    system("updateDate", .isoText(row.updateDate))
    members.sort { CanonicalJSON.precedes($0.key, $1.key) }
    for (first, second) in zip(members, members.dropFirst())
    where !CanonicalJSON.precedes(first.key, second.key) {
      return false  // a key stored twice: the last one read wins, as the reader decides
    }
    out.append(UInt8(ascii: "{"))
    for (index, member) in members.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      out.append(UInt8(ascii: "\""))
      out.append(contentsOf: member.key)
      out.append(contentsOf: #"":"#.utf8)
      switch member.value {
      case .stored(let written): out.append(contentsOf: values[written])
      case .date(let milliseconds):
        out.append(contentsOf: #"{"__type":"Date","iso":""#.utf8)
        BackendDate.write(milliseconds: milliseconds, to: &out)
        out.append(contentsOf: #""}"#.utf8)
      case .isoText(let milliseconds):
        out.append(UInt8(ascii: "\""))
        BackendDate.write(milliseconds: milliseconds, to: &out)
        out.append(UInt8(ascii: "\""))
      case .objectId: JSONValue.writeString(row.objectId, to: &out)
      case .acl: out.append(contentsOf: acl)
      }
    }
    out.append(UInt8(ascii: "}"))
    return true
  }

  private static func equal(_ name: String, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
    guard name.utf8.count == key.count else { return false }
    return name.utf8.withContiguousStorageIfAvailable { equal($0, key) }
      ?? name.utf8.elementsEqual(key)
  }

  private static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>)
    -> Bool
  {
    a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
  }
}
