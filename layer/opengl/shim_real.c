/* Resolving the real entry points (with the GL resolver of contexts/gl,
 * which this file gives a way past our own definitions), and the lookups
 * that hand out our wrappers: dlsym, eglGetProcAddress,
 * glXGetProcAddress[ARB]. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "gz_gl_shim.h"

static const char *const names[GZ_SHIM_COUNT] = {
    [GZ_SHIM_eglGetProcAddress] = "eglGetProcAddress",
    [GZ_SHIM_eglSwapBuffers] = "eglSwapBuffers",
    [GZ_SHIM_eglSwapBuffersWithDamageEXT] = "eglSwapBuffersWithDamageEXT",
    [GZ_SHIM_eglSwapBuffersWithDamageKHR] = "eglSwapBuffersWithDamageKHR",
    [GZ_SHIM_eglCreateContext] = "eglCreateContext",
    [GZ_SHIM_eglMakeCurrent] = "eglMakeCurrent",
    [GZ_SHIM_eglDestroyContext] = "eglDestroyContext",
    [GZ_SHIM_eglReleaseThread] = "eglReleaseThread",
    [GZ_SHIM_glXGetProcAddress] = "glXGetProcAddress",
    [GZ_SHIM_glXGetProcAddressARB] = "glXGetProcAddressARB",
    [GZ_SHIM_glXSwapBuffers] = "glXSwapBuffers",
    [GZ_SHIM_glXCreateContext] = "glXCreateContext",
    [GZ_SHIM_glXCreateNewContext] = "glXCreateNewContext",
    [GZ_SHIM_glXCreateContextAttribsARB] = "glXCreateContextAttribsARB",
    [GZ_SHIM_glXMakeCurrent] = "glXMakeCurrent",
    [GZ_SHIM_glXMakeContextCurrent] = "glXMakeContextCurrent",
    [GZ_SHIM_glXDestroyContext] = "glXDestroyContext",
    [GZ_SHIM_glPushDebugGroup] = "glPushDebugGroup",
    [GZ_SHIM_glPushDebugGroupKHR] = "glPushDebugGroupKHR",
    [GZ_SHIM_glPopDebugGroup] = "glPopDebugGroup",
    [GZ_SHIM_glPopDebugGroupKHR] = "glPopDebugGroupKHR",
    [GZ_SHIM_glPushGroupMarkerEXT] = "glPushGroupMarkerEXT",
    [GZ_SHIM_glPopGroupMarkerEXT] = "glPopGroupMarkerEXT",
    [GZ_SHIM_glFlush] = "glFlush",
    [GZ_SHIM_glFinish] = "glFinish",
    [GZ_SHIM_glFenceSync] = "glFenceSync",
    [GZ_SHIM_glReadPixels] = "glReadPixels",
    [GZ_SHIM_glReadnPixels] = "glReadnPixels",
    [GZ_SHIM_glReadnPixelsARB] = "glReadnPixelsARB",
    [GZ_SHIM_glReadnPixelsEXT] = "glReadnPixelsEXT",
    [GZ_SHIM_glReadnPixelsKHR] = "glReadnPixelsKHR",
};

static void *_Atomic reals[GZ_SHIM_COUNT];

/* dlsym is called by the AddressSanitizer runtime while it starts (to find
 * the functions it intercepts), before instrumented code can run: dlsym
 * and what it calls are not instrumented, and call no intercepted libc
 * function (hence the string comparison of our own). */
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

NO_SANITIZE static bool same_name(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn _Atomic real_dlsym_ptr;

NO_SANITIZE static dlsym_fn real_dlsym_get(void)
{
    dlsym_fn f = atomic_load_explicit(&real_dlsym_ptr, memory_order_acquire);
    if (!f) {
        /* dlvsym is not interposed; dlsym moved to libc in glibc 2.34. */
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
            f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (f)
            atomic_store_explicit(&real_dlsym_ptr, f, memory_order_release);
    }
    return f;
}

NO_SANITIZE void *gz_shim_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = real_dlsym_get();
    return f ? f(handle, name) : NULL;
}

NO_SANITIZE void *gz_shim_wrapper_for(const char *name, gz_shim_fn *fn)
{
    /* Every name we wrap starts with "egl" or "gl". */
    if (!name || (name[0] != 'e' && name[0] != 'g'))
        return NULL;
    for (int i = 0; i < GZ_SHIM_COUNT; i++)
        if (same_name(name, names[i])) {
            *fn = (gz_shim_fn)i;
            return gz_shim_wrappers[i];
        }
    return NULL;
}

NO_SANITIZE void gz_shim_note_real(gz_shim_fn fn, void *real)
{
    void *expected = NULL;
    if (real && real != gz_shim_wrappers[fn])
        atomic_compare_exchange_strong(&reals[fn], &expected, real);
}

/* The program's own definition of name, never ours (ours: our wrapper
 * for it, or NULL): the next one after the shim, which is the real
 * library's when the program links it, else one in the loaded libraries
 * (the GL resolver finds those loaded with RTLD_LOCAL, as libepoxy does). */
static void *find_next(const char *name, void *ours)
{
    void *p = gz_shim_real_dlsym(RTLD_NEXT, name);
    if (p && p != ours)
        return p;
    return gz_gl_find_loaded(name, gz_shim_real_dlsym);
}

static void *resolve_real(gz_shim_fn fn)
{
    const char *name = names[fn];
    void *p = find_next(name, gz_shim_wrappers[fn]);
    if (p || name[0] == 'e' || name[2] == 'X')
        return p;
    /* GL functions outside the libraries' exports: ask the window system. */
    void *(*gpa)(const char *) = (void *(*)(const char *))gz_shim_real(GZ_SHIM_eglGetProcAddress);
    if (gpa && gz_shim_current_key() && (p = gpa(name)))
        return p;
    gpa = (void *(*)(const char *))gz_shim_real(GZ_SHIM_glXGetProcAddressARB);
    return gpa ? gpa(name) : NULL;
}

void *gz_shim_real(gz_shim_fn fn)
{
    void *p = atomic_load_explicit(&reals[fn], memory_order_acquire);
    if (p)
        return p;
    p = resolve_real(fn);
    if (p)
        gz_shim_note_real(fn, p);
    return p;
}

/* The GL resolver's finder while the shim is loaded: our own definitions
 * come first in the global scope, so the resolver is told from the start
 * how to find the real ones, wrapped or not. */
static void *find_real(const char *name)
{
    gz_shim_fn fn;
    if (gz_shim_wrapper_for(name, &fn))
        return gz_shim_real(fn);
    return find_next(name, NULL);
}

__attribute__((constructor)) static void use_find_real(void)
{
    gz_gl_use_finder(find_real);
}

/* dlsym with a library handle (or RTLD_DEFAULT): our wrapper for a wrapped
 * name the library really has. */
NO_SANITIZE __attribute__((used)) void *gz_shim_dlsym_handle(void *handle, const char *name);
void *gz_shim_dlsym_handle(void *handle, const char *name)
{
    void *p = gz_shim_real_dlsym(handle, name);
    gz_shim_fn fn;
    void *w = p ? gz_shim_wrapper_for(name, &fn) : NULL;
    if (!w || w == p)
        return p;
    gz_shim_note_real(fn, p);
    return w;
}

static void *no_dlsym(void *handle, const char *name)
{
    return NULL;
}

/* The real dlsym itself, for the trampoline below. */
NO_SANITIZE __attribute__((used)) dlsym_fn gz_shim_real_dlsym_fn(void);
dlsym_fn gz_shim_real_dlsym_fn(void)
{
    dlsym_fn f = real_dlsym_get();
    return f ? f : no_dlsym;
}

/* dlsym(RTLD_NEXT, …) is answered relative to the caller, which glibc finds
 * from dlsym's return address: the real dlsym must be entered by a jump
 * from ours, with the caller's return address still on the stack, or every
 * RTLD_NEXT lookup (the AddressSanitizer runtime's and other preloaded
 * libraries' among them) would be answered relative to the shim. C cannot
 * promise a tail call, hence these few instructions. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n" /* RTLD_NEXT */
        "    jne gz_shim_dlsym_handle\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n" /* 16-byte alignment for the call */
        "    call gz_shim_real_dlsym_fn\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    jmp *%rax\n"
        ".size dlsym, .-dlsym\n");
#else
/* Elsewhere RTLD_NEXT is answered relative to the shim, which is the first
 * library in the search order after the program and the ones preloaded
 * before it: right for the program, approximate for other libraries. It
 * has a name of its own and is exported as dlsym, as the instructions
 * above are, so that dlsym in C means the C library's everywhere. */
NO_SANITIZE static void *dlsym_any_cpu(void *restrict handle, const char *restrict name)
{
    if (handle == RTLD_NEXT)
        return gz_shim_real_dlsym(handle, name);
    return gz_shim_dlsym_handle(handle, name);
}
GZ_EXPORT void *dlsym(void *restrict handle, const char *restrict name)
    __attribute__((alias("dlsym_any_cpu")));
#endif

/* The GetProcAddress family: the same rule. */
static void *wrap_gpa(gz_shim_fn self, const char *name)
{
    void *(*real)(const char *) = (void *(*)(const char *))gz_shim_real(self);
    void *p = real ? real(name) : NULL;
    gz_shim_fn fn;
    void *w = p ? gz_shim_wrapper_for(name, &fn) : NULL;
    if (!w || w == p)
        return p;
    gz_shim_note_real(fn, p);
    return w;
}

GZ_EXPORT void *eglGetProcAddress(const char *name);
void *eglGetProcAddress(const char *name)
{
    return wrap_gpa(GZ_SHIM_eglGetProcAddress, name);
}

GZ_EXPORT void *glXGetProcAddress(const unsigned char *name);
void *glXGetProcAddress(const unsigned char *name)
{
    return wrap_gpa(GZ_SHIM_glXGetProcAddress, (const char *)name);
}

GZ_EXPORT void *glXGetProcAddressARB(const unsigned char *name);
void *glXGetProcAddressARB(const unsigned char *name)
{
    return wrap_gpa(GZ_SHIM_glXGetProcAddressARB, (const char *)name);
}
