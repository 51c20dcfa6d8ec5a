// libFuzzer target for the pure-Swift container walkers and metadata strippers (PNG, JPEG, GIF,
// WebP, Exif): compiled together with Sources/Forum/Images by Scripts/fuzz.sh.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContainers(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Data(bytes: data, count: size)
  if let image = try? ImagePreparer.prepare(bytes) {
    // What was stored must prepare again to the same picture with nothing left to strip.
    guard let again = try? ImagePreparer.prepare(image.data),
      again.width == image.width, again.height == image.height,
      again.orientation == image.orientation, again.data == image.data
    else { fatalError("prepared bytes do not prepare again to themselves") }
  }
  _ = ExifOrientation.read(Array(bytes))
  return 0
}
