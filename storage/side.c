/*
 * side.c — the files emqlite keeps beside a database file: `<file>-emqlock`
 * (the writer gate, gate.c), `<file>-emqnode` (the node-id leases and
 * mint reservations, engine/core/nodeid.c) and `<file>-emqwake` (the wake file
 * of waiting claims, notify.c).
 *
 * Rules: a side file is named after the resolved database file (store.c
 * resolves symlinks at open), so every way of naming one file reaches the
 * same side files. It is opened without following a symlink (O_NOFOLLOW)
 * and is never inherited across exec (O_CLOEXEC); it must be a regular file
 * with a single link, owned by the database file's owner or by this
 * process's effective user, or it is refused (EMQ_ECANTOPEN): emqlite never
 * writes through a link someone planted. A side file emqlite creates gets
 * the database file's permission bits (not the umask's) and, when emqlite
 * runs as root, the database file's owner and group. SQLite's own -wal
 * and -shm are judged by the same rules before SQLite may open them
 * (emq_store_side_check). A refusal for the owner names the file, its
 * owner (uid and user name) and the expected owners.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store_int.h"
#include "notify.h"

const char *const emq_store_side_suffixes[] = {
    "-wal", "-shm", "-journal", EMQ_SIDE_GATE, EMQ_SIDE_NODE,
    EMQ_NOTIFY_SUFFIX, NULL
};

static void say(char *err, size_t errlen, const char *fmt, const char *p,
                const char *why)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, p, why);
}

/* "uid N (name)", or "uid N" when the user database has no name for it. */
static void who(char *out, size_t cap, unsigned long uid)
{
    struct passwd pw, *res = NULL;
    char buf[1024];
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &res) == 0 && res &&
        res->pw_name)
        snprintf(out, cap, "uid %lu (%s)", uid, res->pw_name);
    else
        snprintf(out, cap, "uid %lu", uid);
}

/* The refusal of a side file another user owns: names the file, its owner
 * and whom it should belong to, and what to do. */
static int foreign(const emq_store *st, const char *p, unsigned long uid,
                   char *err, size_t errlen)
{
    char owner[128], want[128], why[600];
    who(owner, sizeof owner, uid);
    who(want, sizeof want, st->file_uid);
    snprintf(why, sizeof why, "it is owned by %s, not by the database "
             "file's owner (%s) or this process's user; remove it (as its "
             "owner or root) and keep databases in a directory only their "
             "owner can write, not a shared one such as /tmp", owner, want);
    say(err, errlen, "refusing the side file %s: %s", p, why);
    return EMQ_ECANTOPEN;
}

/* Judge a side file's status. EMQ_OK or EMQ_ECANTOPEN with the reason. */
static int judge_stat(const emq_store *st, const struct stat *sbp,
                      const char *p, char *err, size_t errlen)
{
    struct stat sb = *sbp;
    char why[128];
    if (S_ISLNK(sb.st_mode)) {
        say(err, errlen, "refusing the side file %s: %s", p,
            "it is a symbolic link");
        return EMQ_ECANTOPEN;
    }
    if (!S_ISREG(sb.st_mode)) {
        say(err, errlen, "refusing the side file %s: %s", p,
            "it is not a regular file");
        return EMQ_ECANTOPEN;
    }
    if (sb.st_nlink != 1) {
        snprintf(why, sizeof why, "it has %lu hard links",
                 (unsigned long)sb.st_nlink);
        say(err, errlen, "refusing the side file %s: %s", p, why);
        return EMQ_ECANTOPEN;
    }
    if (sb.st_uid != st->file_uid && sb.st_uid != geteuid())
        return foreign(st, p, (unsigned long)sb.st_uid, err, errlen);
    return EMQ_OK;
}

/* Judge an opened side file. EMQ_OK or EMQ_ECANTOPEN with the reason. */
static int judge(const emq_store *st, int fd, const char *p, char *err,
                 size_t errlen)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        say(err, errlen, "cannot inspect the side file %s: %s", p,
            strerror(errno));
        return EMQ_EIO;
    }
    return judge_stat(st, &sb, p, err, errlen);
}

int emq_store_side_check(const emq_store *st, const char *suffix, char *err,
                         size_t errlen)
{
    char p[EMQ_PATH_MAX + 16];
    struct stat sb;
    if (snprintf(p, sizeof p, "%s%s", st->path, suffix) >= (int)sizeof p) {
        say(err, errlen, "cannot open %s%s: the path is too long", st->path,
            suffix);
        return EMQ_ECANTOPEN;
    }
    if (lstat(p, &sb) != 0)
        return EMQ_OK; /* absent (or unreadable: SQLite reports it) */
    return judge_stat(st, &sb, p, err, errlen);
}

/* errno of a failed open → the EMQ code a caller reports. */
static int open_code(int e)
{
    return e == EACCES || e == EROFS || e == EPERM ? EMQ_EREADONLY
                                                   : EMQ_ECANTOPEN;
}

int emq_store_side_open(emq_store *st, const char *suffix, int create,
                        int *fdp, char *err, size_t errlen)
{
    char p[EMQ_PATH_MAX + 16];
    int fd = -1, rc, made = 0;
    *fdp = -1;
    if (snprintf(p, sizeof p, "%s%s", st->path, suffix) >= (int)sizeof p) {
        say(err, errlen, "cannot open %s%s: the path is too long", st->path,
            suffix);
        return EMQ_ECANTOPEN;
    }
    for (int tries = 0; fd < 0 && tries < 3; tries++) {
        if (create) {
            fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600);
            if (fd >= 0) {
                made = 1;
                break;
            }
            if (errno != EEXIST) break;
        }
        fd = open(p, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && !create)
            return EMQ_NOTFOUND;
        if (fd < 0 && errno != ENOENT) break; /* ENOENT: removed; again */
    }
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP) {
            say(err, errlen, "refusing the side file %s: %s", p,
                "it is a symbolic link");
            return EMQ_ECANTOPEN;
        }
        struct stat sb;
        /* A file we may not open because another user owns it: say so. */
        if ((e == EACCES || e == EPERM) && lstat(p, &sb) == 0 &&
            sb.st_uid != st->file_uid && sb.st_uid != geteuid())
            return foreign(st, p, (unsigned long)sb.st_uid, err, errlen);
        say(err, errlen, "cannot open the side file %s: %s", p, strerror(e));
        return open_code(e);
    }
    rc = EMQ_OK;
    /* The database file's permissions, whatever the umask; as root, its
     * owner too, so that its owner can open it later. */
    if (made && (fchmod(fd, st->file_mode & 0666) != 0 ||
                 (geteuid() == 0 &&
                  fchown(fd, st->file_uid, st->file_gid) != 0))) {
        say(err, errlen, "cannot set the permissions of %s: %s", p,
            strerror(errno));
        rc = EMQ_ECANTOPEN;
        unlink(p);
        goto done;
    }
    rc = judge(st, fd, p, err, errlen);
done:
    if (rc == EMQ_OK)
        *fdp = fd;
    else
        close(fd);
    return rc;
}
