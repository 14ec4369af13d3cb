// SQL for uploaded document files. An upload writes the file's bytes as they arrive, a part at a
// time, keyed by the id its document will have, so no more than a part is held in memory; the
// document and its file record are created together once the whole file is in and checked. The
// parts of an upload that ended without a document are deleted by the upload (`discard`), or at the
// next start (`sweepOrphans`) when the process stopped mid-upload. Deleting the document (or its
// user) deletes its file record, and a trigger its parts.
import type { Db } from '../db.js';

/** The most bytes of one stored part (and of a file held in memory while it is written or served). */
export const PART_BYTES = 256 * 1024;

/** An uploaded file as recorded: what GET /documents/{id}/file answers, without the bytes. */
export interface DocumentFile {
  documentId: string;
  filename: string;
  contentType: string;
  size: number;
  parts: number;
}

export type FileStore = ReturnType<typeof createFileStore>;

export function createFileStore(db: Db) {
  const insertPart = db.prepare(`INSERT INTO document_file_parts (document_id, part, bytes) VALUES (?, ?, ?)`);
  const deleteParts = db.prepare(`DELETE FROM document_file_parts WHERE document_id = ?`);
  // Finds the orphans in the index of parts (document id, part number: ~90 entries a page), not in
  // the table, whose pages hold the start of each part's bytes (~8 parts a page).
  const deleteOrphans = db.prepare(
    `DELETE FROM document_file_parts WHERE document_id IN (
       SELECT DISTINCT p.document_id FROM document_file_parts p WHERE p.document_id NOT IN (SELECT document_id FROM document_files))`,
  );
  const selectFile = db.prepare(
    `SELECT f.document_id AS documentId, f.filename, f.content_type AS contentType, f.size,
            (SELECT count(*) FROM document_file_parts p WHERE p.document_id = f.document_id) AS parts
       FROM document_files f JOIN documents d ON d.id = f.document_id
      WHERE f.document_id = ? AND d.user_id = ?`,
  );
  const selectPart = db.prepare(`SELECT bytes FROM document_file_parts WHERE document_id = ? AND part = ?`).pluck();
  const selectAll = db.prepare(`SELECT bytes FROM document_file_parts WHERE document_id = ? ORDER BY part`).pluck();
  const selectForIngestion = db.prepare(`SELECT content_type AS contentType, size FROM document_files WHERE document_id = ?`);

  return {
    /** Writes part `part` (0, 1, 2 …) of the file of the document that will have id `documentId`. */
    appendPart(documentId: string, part: number, bytes: Buffer): void {
      insertPart.run(documentId, part, bytes);
    },

    /** Deletes the parts of an upload that will not become a document. */
    discard(documentId: string): void {
      deleteParts.run(documentId);
    },

    /** Deletes parts no file record owns (uploads a stopped process left mid-way). Only at start, before uploads are taken. */
    sweepOrphans(): number {
      return deleteOrphans.run().changes;
    },

    /** The user's document's file, or undefined (no such document, another user's, or not uploaded). */
    get: (userId: string, documentId: string) => selectFile.get(documentId, userId) as DocumentFile | undefined,

    /** One part of a file's bytes; undefined past its last part (or once the document was deleted). */
    part: (documentId: string, part: number) => selectPart.get(documentId, part) as Buffer | undefined,

    /** A document's whole file and its media type, for ingestion; undefined when it has none. */
    read(documentId: string): { bytes: Buffer; contentType: string } | undefined {
      const file = selectForIngestion.get(documentId) as { contentType: string; size: number } | undefined;
      if (file === undefined) return undefined;
      // Copied into one buffer of the recorded size as the parts are read, never held twice.
      const bytes = Buffer.allocUnsafe(file.size);
      let at = 0;
      for (const part of selectAll.iterate(documentId) as IterableIterator<Buffer>) at += part.copy(bytes, at);
      return { bytes: bytes.subarray(0, at), contentType: file.contentType };
    },
  };
}
