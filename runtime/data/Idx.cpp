// IDX reading and writing; see Idx.h. Reading goes through zlib's gz* functions, which read
// gzipped and plain files alike.
#include "runtime/data/Idx.h"

#include "runtime/base/Error.h"
#include "runtime/base/Files.h"
#include "runtime/base/Heartbeat.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace dp::rt {
namespace {

constexpr uint32_t kU8Type = 0x08;
constexpr uint32_t kF32Type = 0x0d;

uint32_t typeCode(IdxElement element) { return element == IdxElement::F32 ? kF32Type : kU8Type; }
uint64_t typeBytes(IdxElement element) { return element == IdxElement::F32 ? 4 : 1; }

[[noreturn]] void fail(const std::string &path, const std::string &problem) {
  throw Error(ErrorKind::Data, path + ": " + problem);
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", value);
  return text;
}

std::string dimsWord(int rank) { return rank == 1 ? "dimension" : "dimensions"; }

/// Says what a magic number denotes, so that a labels file given as images is recognisable.
std::string describeMagic(uint32_t magic) {
  if ((magic >> 16) != 0)
    return "not an IDX file";
  const char *type = nullptr;
  switch ((magic >> 8) & 0xff) {
  case 0x08:
    type = "unsigned bytes";
    break;
  case 0x09:
    type = "signed bytes";
    break;
  case 0x0b:
    type = "16-bit integers";
    break;
  case 0x0c:
    type = "32-bit integers";
    break;
  case 0x0d:
    type = "32-bit floats";
    break;
  case 0x0e:
    type = "64-bit floats";
    break;
  default:
    return "not an IDX file";
  }
  int rank = magic & 0xff;
  return std::string("IDX of ") + type + ", " + std::to_string(rank) + " " + dimsWord(rank);
}

struct GzCloser {
  void operator()(gzFile_s *file) const { gzclose(file); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

/// Reads up to `size` bytes; returns how many were read (fewer only at the end of the data).
/// A gzip stream that stops early counts as the end of the data: the caller reports the
/// shortfall in terms of the header's claim, which is more useful than zlib's wording.
uint64_t readSome(gzFile file, uint8_t *out, uint64_t size, const std::string &path) {
  uint64_t done = 0;
  while (done < size) {
    // 1 MiB at a time, each a beat of work that the other ranks' timeouts see.
    unsigned chunk = static_cast<unsigned>(std::min<uint64_t>(size - done, 1u << 20));
    heartbeat::beat();
    int got = gzread(file, out + done, chunk);
    if (got < 0) {
      int code = 0;
      const char *message = gzerror(file, &code);
      if (code == Z_BUF_ERROR) // "unexpected end of file": a truncated gzip stream
        return done;
      if (code == Z_DATA_ERROR)
        fail(path, std::string("corrupt gzip data: ") + message);
      // zlib could not allocate its buffers: the process's memory, not the file (exit 7).
      if (code == Z_MEM_ERROR || (code == Z_ERRNO && errno == ENOMEM))
        throw Error(ErrorKind::Memory, path + ": out of memory while reading it (" +
                                           (code == Z_ERRNO ? std::strerror(errno) : message) +
                                           ")");
      fail(path, std::string("read error: ") + (code == Z_ERRNO ? std::strerror(errno) : message));
    }
    if (got == 0)
      return done;
    done += static_cast<uint64_t>(got);
  }
  return done;
}

std::string describeItems(const std::vector<uint32_t> &dims, const std::string &items) {
  std::string text = std::to_string(dims[0]) + " " + items;
  if (dims.size() > 1) {
    text += " of ";
    for (size_t i = 1; i < dims.size(); ++i)
      text += (i > 1 ? "x" : "") + std::to_string(dims[i]);
  }
  return text;
}

[[noreturn]] void truncated(const std::string &path, const IdxHeader &h, const std::string &items,
                            uint64_t present) {
  const uint64_t whole = h.itemBytes ? present / h.itemBytes : 0;
  fail(path, "header claims " + std::to_string(h.dims[0]) + " " + items + " (" +
                 std::to_string(h.payload) + " bytes) but the file holds " +
                 std::to_string(whole) + " (" + std::to_string(present) + " bytes)");
}

[[noreturn]] void trailing(const std::string &path, const IdxHeader &h, const std::string &items,
                           const std::string &amount) {
  fail(path, amount + "trailing data after the " + std::to_string(h.dims[0]) + " " + items +
                 " the header declares; the header's count is probably wrong");
}

/// An IDX file opened with its header read and checked, positioned at the start of its body.
struct OpenIdx {
  GzHandle file;
  IdxHeader header;
  uint64_t fileBytes = 0, headerBytes = 0;
};

OpenIdx openIdx(const std::string &path, int rank, const std::string &items, uint64_t maxBytes,
                IdxElement element) {
  if (rank < 1 || rank > 8)
    throw Error(ErrorKind::Runtime, "readIdx: rank " + std::to_string(rank) + " is not supported");
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    fail(path,
         errno == ENOENT ? "file not found" : std::string("cannot open: ") + std::strerror(errno));
  checkRegularMode(path, info.st_mode, "data", ErrorKind::Data);
  OpenIdx open;
  open.file.reset(gzopen(path.c_str(), "rb"));
  if (!open.file)
    fail(path, std::string("cannot open: ") + std::strerror(errno));
  gzFile file = open.file.get();
  gzbuffer(file, 1 << 17);

  const uint64_t headerBytes = 4 + 4 * static_cast<uint64_t>(rank);
  uint8_t header[4 + 4 * 8];
  uint64_t got = readSome(file, header, headerBytes, path);
  if (got < 4)
    fail(path, got == 0 ? "file is empty"
                        : "too short for an IDX header (" + std::to_string(got) + " bytes)");
  uint32_t magic = (uint32_t(header[0]) << 24) | (uint32_t(header[1]) << 16) |
                   (uint32_t(header[2]) << 8) | header[3];
  const uint32_t expected = (typeCode(element) << 8) | static_cast<uint32_t>(rank);
  if (magic != expected)
    fail(path, "bad magic " + hex32(magic) + " (" + describeMagic(magic) + "), expected " +
                   hex32(expected) + " (" + describeMagic(expected) + ") for " + items);
  if (got < headerBytes)
    fail(path, "IDX header truncated: " + std::to_string(got) + " of " +
                   std::to_string(headerBytes) + " header bytes");

  IdxHeader &h = open.header;
  uint64_t itemBytes = typeBytes(element); // bytes per outer item
  bool tooLarge = false;
  for (int i = 0; i < rank; ++i) {
    const uint8_t *p = header + 4 + 4 * i;
    uint32_t dim = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
    h.dims.push_back(dim);
    if (i > 0) {
      if (dim != 0 && itemBytes > maxBytes / dim)
        tooLarge = true;
      else
        itemBytes *= dim;
    }
  }
  const uint64_t count = h.dims[0];
  if (!tooLarge && itemBytes != 0 && count > maxBytes / itemBytes)
    tooLarge = true;
  if (tooLarge)
    fail(path, "header claims " + describeItems(h.dims, items) + ", more than the " +
                   std::to_string(maxBytes >> 20) +
                   " MiB limit of this reader; the file is corrupt");
  h.itemBytes = itemBytes;
  h.element = element;
  h.payload = count * itemBytes;
  h.compressed = gzdirect(file) == 0;
  open.fileBytes = static_cast<uint64_t>(info.st_size);
  open.headerBytes = headerBytes;
  return open;
}

/// Reads the body the header declares, and one byte more to find trailing data.
std::vector<uint8_t> readBody(OpenIdx &open, const std::string &path, const std::string &items) {
  const IdxHeader &h = open.header;
  // A plain file's size is known: check it before allocating anything.
  if (!h.compressed) {
    const uint64_t size = open.fileBytes, headerBytes = open.headerBytes;
    if (size < headerBytes + h.payload)
      truncated(path, h, items, size - headerBytes);
    if (size > headerBytes + h.payload)
      trailing(path, h, items, std::to_string(size - headerBytes - h.payload) + " bytes of ");
  }
  // A gzip stream's size is not known up front: grow the buffer as data arrives, so a false
  // claim costs at most about twice the bytes really present, and never more than the claim.
  std::vector<uint8_t> data;
  uint64_t have = 0;
  uint64_t capacity = std::min<uint64_t>(h.payload, uint64_t(1) << 20);
  data.resize(capacity);
  while (have < h.payload) {
    if (have == capacity) {
      capacity = std::min<uint64_t>(h.payload, capacity * 2);
      data.resize(capacity);
    }
    uint64_t n = readSome(open.file.get(), data.data() + have, capacity - have, path);
    have += n;
    if (have < capacity)
      truncated(path, h, items, have);
  }
  // Stop at the first byte past the claim: the rest of a stream (a bomb's gigabytes) is never
  // inflated.
  uint8_t extra;
  if (readSome(open.file.get(), &extra, 1, path) != 0)
    trailing(path, h, items, "");
  return data;
}

} // namespace

IdxHeader readIdxHeader(const std::string &path, int rank, const std::string &items,
                        uint64_t maxBytes, IdxElement element) {
  return openIdx(path, rank, items, maxBytes, element).header;
}

IdxArray readIdx(const std::string &path, int rank, const std::string &items, uint64_t maxBytes) {
  OpenIdx open = openIdx(path, rank, items, maxBytes, IdxElement::U8);
  IdxArray array;
  array.data = readBody(open, path, items);
  array.dims = std::move(open.header.dims);
  return array;
}

IdxArray readIdx(const std::string &path, int rank, const std::string &items,
                 const IdxHeader &declared) {
  // No limit of its own: a header that declares anything but what was checked is refused
  // below, before the body, so no more than `declared.payload` is allocated.
  OpenIdx open = openIdx(path, rank, items, UINT64_MAX, declared.element);
  if (open.header.dims != declared.dims)
    fail(path, "header changed while being read: it declared " +
                   describeItems(declared.dims, items) + ", now " +
                   describeItems(open.header.dims, items) + " (was the file replaced?)");
  IdxArray array;
  array.data = readBody(open, path, items);
  array.dims = std::move(open.header.dims);
  return array;
}

std::vector<float> idxFloats(const IdxArray &array) {
  std::vector<float> values(array.data.size() / 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint8_t *p = array.data.data() + 4 * i;
    const uint32_t word =
        (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
    std::memcpy(&values[i], &word, 4);
  }
  return values;
}

namespace {

void writeIdxBytes(const std::string &path, const std::vector<uint32_t> &dims, IdxElement element,
                   const uint8_t *data, size_t size, bool gzip) {
  std::string bytes = {0, 0, static_cast<char>(typeCode(element)), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(static_cast<char>((d >> shift) & 0xff));
  bytes.append(reinterpret_cast<const char *>(data), size);
  // "wb" writes gzip; "wT" writes the bytes through unchanged.
  GzHandle file(gzopen(path.c_str(), gzip ? "wb" : "wT"));
  if (!file)
    throw Error(ErrorKind::Runtime, path + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 30));
    if (gzwrite(file.get(), bytes.data() + done, chunk) != static_cast<int>(chunk))
      throw Error(ErrorKind::Runtime, path + ": write failed");
    done += chunk;
  }
  if (gzclose(file.release()) != Z_OK)
    throw Error(ErrorKind::Runtime, path + ": write failed");
}

} // namespace

void writeIdx(const std::string &path, const std::vector<uint32_t> &dims,
              const std::vector<uint8_t> &data, bool gzip) {
  writeIdxBytes(path, dims, IdxElement::U8, data.data(), data.size(), gzip);
}

void writeIdxFloats(const std::string &path, const std::vector<uint32_t> &dims,
                    const std::vector<float> &values, bool gzip) {
  std::vector<uint8_t> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t word;
    std::memcpy(&word, &values[i], 4);
    for (int b = 0; b < 4; ++b)
      bytes[4 * i + b] = static_cast<uint8_t>(word >> (24 - 8 * b));
  }
  writeIdxBytes(path, dims, IdxElement::F32, bytes.data(), bytes.size(), gzip);
}

} // namespace dp::rt
