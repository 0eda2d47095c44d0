#include "apps/graphs/npz.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "kernels/atomic_file.hpp"
#include "kernels/error.hpp"

namespace topo::apps {

namespace {

// Little-endian fields of the zip format in `data`, a piece of the archive that starts at byte `base` of its
// `total`, bounds-checked against the piece (errors give archive offsets).
struct Bytes {
  const std::string& data;
  const std::string& path;
  std::uint64_t base = 0, total = 0;
  std::uint64_t u(std::size_t at, int width, const char* field) const {
    TOPO_CHECK(at + static_cast<std::size_t>(width) <= data.size() && at + static_cast<std::size_t>(width) >= at,
               "{}: truncated zip archive ({} at byte {} past its end, {} bytes)", path, field, base + at, total);
    std::uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(data[at + static_cast<std::size_t>(i)]);
    return v;
  }
};

constexpr std::uint32_t kEndOfDirectory = 0x06054b50, kDirectoryEntry = 0x02014b50, kLocalHeader = 0x04034b50;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

// Bytes [offset, offset + length) of the archive, which must lie inside its `total` bytes.
std::string read_range(const std::string& path, std::uint64_t total, std::uint64_t offset, std::uint64_t length,
                       const std::string& what) {
  TOPO_CHECK(offset <= total && length <= total - offset, "{}: truncated zip archive ({}: bytes {}..{} past its end, {} bytes)",
             path, what, offset, offset + length, total);
  std::ifstream in(path, std::ios::binary);
  TOPO_CHECK(in.is_open(), "{}: cannot open", path);
  std::string out(static_cast<std::size_t>(length), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(out.data(), static_cast<std::streamsize>(length));
  TOPO_CHECK(in.gcount() == static_cast<std::streamsize>(length), "{}: reading {} ({} bytes at byte {}) failed", path,
             what, length, offset);
  return out;
}

// Inflates a raw deflate stream that declares `size` bytes. The output grows with what zlib produces, never
// allocated from the declared size up front: an archive that claims 4 GiB in a few bytes costs what it holds
// (fuzz_npz found the up-front allocation).
std::string inflate_member(const std::string& compressed, std::uint64_t size, const std::string& what) {
  std::string out;
  z_stream z{};
  TOPO_CHECK(inflateInit2(&z, -MAX_WBITS) == Z_OK, "{}: zlib cannot start inflating", what);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(chunk, sizeof chunk - z.avail_out);
    if (out.size() > size) break;
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) break;  // input used up before the stream's end
  }
  inflateEnd(&z);
  TOPO_CHECK(rc == Z_STREAM_END && out.size() == size,
             "{}: the deflate stream is corrupt or truncated ({} bytes inflated, {} declared)", what, out.size(), size);
  return out;
}

// The dtype parts numpy's descr spells: byte order, kind and item size ("<f4"). The known ones: b1, i1..i8,
// u1..u8, f4, f8; 0 for any other. Called per element by int64_at, so a switch, not string compares (those were
// most of the time reading a 21M-edge graph).
std::int64_t item_size_of(const std::string& dtype) {
  if (dtype.size() != 2) return 0;
  const char size = dtype[1];
  switch (dtype[0]) {
    case 'b': return size == '1' ? 1 : 0;
    case 'i':
    case 'u': return size == '1' || size == '2' || size == '4' || size == '8' ? size - '0' : 0;
    case 'f': return size == '4' || size == '8' ? size - '0' : 0;
    default: return 0;
  }
}

// The value after 'key': in numpy's header dict ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }").
std::string header_value(const std::string& header, const std::string& key, const std::string& what) {
  const std::size_t at = header.find("'" + key + "'");
  TOPO_CHECK(at != std::string::npos, "{}: the .npy header has no '{}' ({})", what, key, header);
  std::size_t v = header.find(':', at);
  TOPO_CHECK(v != std::string::npos, "{}: the .npy header's '{}' has no value", what, key);
  v = header.find_first_not_of(' ', v + 1);
  TOPO_CHECK(v != std::string::npos, "{}: the .npy header's '{}' has no value", what, key);
  if (header[v] == '\'') {
    const std::size_t end = header.find('\'', v + 1);
    TOPO_CHECK(end != std::string::npos, "{}: unterminated '{}' in the .npy header", what, key);
    return header.substr(v + 1, end - v - 1);
  }
  if (header[v] == '(') {
    const std::size_t end = header.find(')', v);
    TOPO_CHECK(end != std::string::npos, "{}: unterminated '{}' in the .npy header", what, key);
    return header.substr(v, end - v + 1);
  }
  const std::size_t end = header.find_first_of(",}", v);
  return header.substr(v, end == std::string::npos ? std::string::npos : end - v);
}

}  // namespace

std::int64_t NpyArray::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::int64_t NpyArray::item_size() const { return item_size_of(dtype); }

namespace {

// Element i of a little-endian integer array of `kind` ('i', 'u', 'b') and item size `size` as an int64.
std::int64_t integer_at(const std::string& bytes, std::int64_t i, char kind, std::int64_t size, const std::string& what) {
  std::uint64_t raw = 0;
  std::memcpy(&raw, bytes.data() + i * size, static_cast<std::size_t>(size));  // little-endian host
  if (kind == 'i' && size < 8 && (raw >> (8 * size - 1)) & 1) raw |= ~std::uint64_t{0} << (8 * size);  // sign
  if (kind == 'u' && size == 8)
    TOPO_CHECK(raw <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
               "{}: element {} = {} does not fit an int64", what, i, raw);
  return static_cast<std::int64_t>(raw);
}

}  // namespace

std::int64_t NpyArray::int64_at(std::int64_t i, const std::string& what) const {
  return integer_at(bytes, i, dtype[0], item_size(), what);
}

std::vector<std::int64_t> NpyArray::as_int64(const std::string& what) const {
  const std::int64_t n = numel();
  const char kind = dtype[0];
  TOPO_CHECK(kind == 'i' || kind == 'u' || kind == 'b', "{}: expected integers, the array holds dtype {}", what, dtype);
  const std::int64_t size = item_size();
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  if (kind == 'i' && size == 8) {
    std::memcpy(out.data(), bytes.data(), static_cast<std::size_t>(n) * 8);
  } else if (kind == 'i' && size == 4) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::int32_t v;
      std::memcpy(&v, bytes.data() + i * 4, 4);
      out[static_cast<std::size_t>(i)] = v;
    }
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = integer_at(bytes, i, kind, size, what);
  }
  return out;
}

std::vector<float> NpyArray::as_float(const std::string& what) const {
  const std::int64_t n = numel();
  std::vector<float> out(static_cast<std::size_t>(n));
  if (dtype == "f4") {
    std::memcpy(out.data(), bytes.data(), static_cast<std::size_t>(n) * 4);
  } else if (dtype == "f8") {
    for (std::int64_t i = 0; i < n; ++i) {
      double v = 0;
      std::memcpy(&v, bytes.data() + i * 8, 8);
      out[static_cast<std::size_t>(i)] = static_cast<float>(v);
    }
  } else {
    const std::vector<std::int64_t> ints = as_int64(what);
    for (std::size_t i = 0; i < ints.size(); ++i) out[i] = static_cast<float>(ints[i]);
  }
  return out;
}

NpyArray parse_npy(std::string bytes, const std::string& what) {
  TOPO_CHECK(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0, "{}: not a .npy array (no \\x93NUMPY magic)",
             what);
  const int major = static_cast<unsigned char>(bytes[6]);
  TOPO_CHECK(major >= 1 && major <= 3, "{}: .npy format version {} is not 1, 2 or 3", what, major);
  std::size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    start = 10;
  } else {
    TOPO_CHECK(bytes.size() >= 12, "{}: truncated .npy header", what);
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(i)]);
    start = 12;
  }
  TOPO_CHECK(header_len <= bytes.size() - start, "{}: the .npy header ({} bytes) runs past the array's {} bytes", what,
             header_len, bytes.size());
  const std::string header = bytes.substr(start, header_len);
  NpyArray a;
  const std::string descr = header_value(header, "descr", what);
  TOPO_CHECK(descr.size() == 3 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '='),
             "{}: dtype '{}' is not supported (little-endian b1, i1..i8, u1..u8, f4 or f8)", what, descr);
  a.dtype = descr.substr(1);
  TOPO_CHECK(item_size_of(a.dtype) > 0, "{}: dtype '{}' is not supported (b1, i1..i8, u1..u8, f4 or f8)", what, descr);
  const std::string fortran = header_value(header, "fortran_order", what);
  TOPO_CHECK(fortran.rfind("False", 0) == 0, "{}: Fortran-order arrays are not supported (save with C order)", what);
  const std::string shape = header_value(header, "shape", what);
  TOPO_CHECK(shape.size() >= 2 && shape.front() == '(' && shape.back() == ')', "{}: bad shape '{}'", what, shape);
  std::int64_t count = 1;
  std::size_t at = 1;
  while (at < shape.size() - 1) {
    const std::size_t comma = std::min(shape.find(',', at), shape.size() - 1);
    std::string item = shape.substr(at, comma - at);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    at = comma + 1;
    if (item.empty()) continue;
    std::int64_t d = -1;
    try {
      std::size_t used = 0;
      d = std::stoll(item, &used);
      if (used != item.size()) d = -1;
    } catch (const std::exception&) {
      d = -1;
    }
    TOPO_CHECK(d >= 0 && d <= kMaxElements, "{}: bad dimension '{}' in shape {}", what, item, shape);
    count *= d;
    TOPO_CHECK(count <= kMaxElements, "{}: shape {} holds more than 2^40 elements", what, shape);
    a.shape.push_back(d);
  }
  const std::size_t data = start + header_len;
  const auto expected = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(a.item_size());
  TOPO_CHECK(bytes.size() - data == expected, "{}: shape {} of {} needs {} bytes, the array has {}", what, shape,
             descr, expected, bytes.size() - data);
  bytes.erase(0, data);  // the elements moved down in place: no second copy of a big array
  a.bytes = std::move(bytes);
  return a;
}

void write_npz(const std::string& path, const std::vector<NpyView>& arrays) {
  // Per member: the local header + name + .npy header (kept in `headers`), then its elements in place.
  std::vector<std::string> headers;
  headers.reserve(arrays.size());
  std::string directory;
  std::uint64_t offset = 0;
  auto put = [](std::string& out, std::uint64_t v, int width) {
    for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  for (const NpyView& a : arrays) {
    TOPO_CHECK(item_size_of(a.dtype) > 0, "{}: array '{}' has dtype '{}' (b1, i1..i8, u1..u8, f4 or f8)", path, a.name,
               a.dtype);
    std::int64_t count = 1;
    std::string shape = "(";
    for (std::size_t i = 0; i < a.shape.size(); ++i) {
      count *= a.shape[i];
      shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
    }
    shape += ")";
    TOPO_CHECK(static_cast<std::uint64_t>(count * item_size_of(a.dtype)) == a.bytes,
               "{}: array '{}' of shape {} and dtype {} needs {} bytes, {} given", path, a.name, shape, a.dtype,
               count * item_size_of(a.dtype), a.bytes);
    // numpy's format 1.0: magic, version, header length, then the header dict padded to 64 bytes with a newline.
    std::string dict = "{'descr': '" + std::string(a.dtype == "b1" || a.dtype[1] == '1' ? "|" : "<") + a.dtype +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + dict.size() + 1) % 64 != 0) dict.push_back(' ');
    dict.push_back('\n');
    std::string npy_header = "\x93NUMPY\x01";
    npy_header.push_back('\0');
    put(npy_header, dict.size(), 2);
    npy_header += dict;
    const std::string name = a.name + ".npy";
    const std::uint64_t size = npy_header.size() + a.bytes;
    TOPO_CHECK(size < 0xFFFFFFFFu && offset < 0xFFFFFFFFu,
               "{}: array '{}' ({} bytes) takes the archive past 4 GiB, which this writer (no zip64) cannot store", path,
               a.name, size);
    auto crc = crc32_z(0L, reinterpret_cast<const Bytef*>(npy_header.data()), npy_header.size());
    crc = crc32_z(crc, static_cast<const Bytef*>(a.data), a.bytes);
    std::string local;
    put(local, kLocalHeader, 4), put(local, 20, 2), put(local, 0, 2), put(local, 0, 2), put(local, 0, 4);
    put(local, crc, 4), put(local, size, 4), put(local, size, 4), put(local, name.size(), 2), put(local, 0, 2);
    headers.push_back(local + name + npy_header);
    put(directory, kDirectoryEntry, 4), put(directory, 20, 2), put(directory, 20, 2), put(directory, 0, 2);
    put(directory, 0, 2), put(directory, 0, 4), put(directory, crc, 4), put(directory, size, 4), put(directory, size, 4);
    put(directory, name.size(), 2), put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 2);
    put(directory, 0, 2), put(directory, 0, 4), put(directory, offset, 4);
    directory += name;
    offset += headers.back().size() + a.bytes;
  }
  TOPO_CHECK(offset + directory.size() < 0xFFFFFFFFu, "{}: the archive would pass 4 GiB, which this writer (no zip64) "
             "cannot store", path);
  const std::size_t directory_size = directory.size();
  put(directory, kEndOfDirectory, 4), put(directory, 0, 2), put(directory, 0, 2), put(directory, arrays.size(), 2);
  put(directory, arrays.size(), 2), put(directory, directory_size, 4), put(directory, offset, 4), put(directory, 0, 2);
  std::vector<ByteRange> parts;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    parts.push_back({headers[i].data(), headers[i].size()});
    parts.push_back({arrays[i].data, arrays[i].bytes});
  }
  parts.push_back({directory.data(), directory.size()});
  write_file_atomically(path, parts);
}

NpzReader::NpzReader(std::string path) : path_(std::move(path)) {
  {
    std::ifstream in(path_, std::ios::binary | std::ios::ate);
    TOPO_CHECK(in.is_open(), "{}: cannot open", path_);
    const std::streamoff end = in.tellg();
    TOPO_CHECK(end >= 0, "{}: cannot read its size", path_);
    file_size_ = static_cast<std::uint64_t>(end);
  }
  // The end-of-central-directory record: the last one within the final 64 KiB + 22 bytes (a comment may follow).
  const std::uint64_t tail_begin = file_size_ > 65557 ? file_size_ - 65557 : 0;
  const std::string tail = read_range(path_, file_size_, tail_begin, file_size_ - tail_begin, "the end record");
  const Bytes t{tail, path_, tail_begin, file_size_};
  std::size_t eocd = std::string::npos;
  if (tail.size() >= 22)
    for (std::size_t i = tail.size() - 21; i-- > 0;)
      if (t.u(i, 4, "signature") == kEndOfDirectory) {
        eocd = i;
        break;
      }
  TOPO_CHECK(eocd != std::string::npos, "{}: not a zip archive (.npz): no end-of-central-directory record", path_);
  const std::uint64_t entries = t.u(eocd + 10, 2, "entry count");
  const std::uint64_t directory_size = t.u(eocd + 12, 4, "central directory size");
  const std::uint64_t directory_at = t.u(eocd + 16, 4, "central directory offset");
  TOPO_CHECK(entries > 0, "{}: the archive holds no arrays", path_);
  const std::string directory = read_range(path_, file_size_, directory_at, directory_size, "the central directory");
  const Bytes b{directory, path_, directory_at, file_size_};
  std::size_t at = 0;
  for (std::uint64_t e = 0; e < entries; ++e) {
    TOPO_CHECK(b.u(at, 4, "central directory entry") == kDirectoryEntry, "{}: central directory entry {} is corrupt",
               path_, e);
    Member m;
    const std::uint64_t flags = b.u(at + 8, 2, "flags");
    m.method = b.u(at + 10, 2, "method");
    m.crc = b.u(at + 16, 4, "crc");
    m.compressed = b.u(at + 20, 4, "compressed size");
    m.size = b.u(at + 24, 4, "size");
    const std::size_t name_len = b.u(at + 28, 2, "name length"), extra_len = b.u(at + 30, 2, "extra length"),
                      comment_len = b.u(at + 32, 2, "comment length");
    m.local = b.u(at + 42, 4, "local header offset");
    TOPO_CHECK(at + 46 + name_len <= directory.size(), "{}: truncated central directory", path_);
    m.file_name = directory.substr(at + 46, name_len);
    // Zip64: the fields that overflow 32 bits are in the extra field 0x0001, in this order.
    for (std::size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const std::uint64_t id = b.u(x, 2, "extra id"), len = b.u(x + 2, 2, "extra length");
      if (id == 1) {
        std::size_t f = x + 4;
        if (m.size == 0xFFFFFFFFu) m.size = b.u(f, 8, "zip64 size"), f += 8;
        if (m.compressed == 0xFFFFFFFFu) m.compressed = b.u(f, 8, "zip64 compressed size"), f += 8;
        if (m.local == 0xFFFFFFFFu) m.local = b.u(f, 8, "zip64 offset");
      }
      x += 4 + len;
    }
    const std::string what = path_ + ": " + m.file_name;
    TOPO_CHECK((flags & 1) == 0, "{}: encrypted members are not supported", what);
    TOPO_CHECK(m.size < (std::uint64_t{1} << 32) && m.compressed < (std::uint64_t{1} << 32),
               "{}: members of 4 GiB or more are not supported", what);
    TOPO_CHECK(m.method == 0 || m.method == 8, "{}: compression method {} (only stored and deflate)", what, m.method);
    TOPO_CHECK(m.file_name.size() > 4 && m.file_name.compare(m.file_name.size() - 4, 4, ".npy") == 0,
               "{}: a member that is not .npy", what);
    std::string key = m.file_name.substr(0, m.file_name.size() - 4);
    TOPO_CHECK(!members_.count(key), "{}: array '{}' is in the archive twice", path_, key);
    names_.push_back(key);
    members_.emplace(std::move(key), std::move(m));
    at += 46 + name_len + extra_len + comment_len;
  }
}

NpyArray NpzReader::read(const std::string& name) const {
  const auto it = members_.find(name);
  if (it == members_.end())
    fail("{} has no array '{}' (it holds {})", path_, name, fmt::join(names_, ", "));
  const Member& m = it->second;
  const std::string what = path_ + ": " + m.file_name;
  const std::string local = read_range(path_, file_size_, m.local, 30, what + "'s local header");
  const Bytes l{local, path_, m.local, file_size_};
  TOPO_CHECK(l.u(0, 4, "local header") == kLocalHeader, "{}: its local header is corrupt", what);
  const std::uint64_t begin = m.local + 30 + l.u(26, 2, "name length") + l.u(28, 2, "extra length");
  TOPO_CHECK(begin <= file_size_ && m.compressed <= file_size_ - begin, "{}: member data past the archive's end", what);
  std::string bytes = read_range(path_, file_size_, begin, m.compressed, what);
  if (m.method != 0) bytes = inflate_member(bytes, m.size, what);
  TOPO_CHECK(bytes.size() == m.size, "{}: {} bytes stored, {} declared", what, bytes.size(), m.size);
  const auto check = crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
  TOPO_CHECK(check == m.crc, "{}: CRC mismatch (the archive is corrupt)", what);
  return parse_npy(std::move(bytes), what);
}

std::map<std::string, NpyArray> read_npz(const std::string& path) {
  const NpzReader reader(path);
  std::map<std::string, NpyArray> out;
  for (const std::string& name : reader.names()) out.emplace(name, reader.read(name));
  return out;
}

}  // namespace topo::apps
