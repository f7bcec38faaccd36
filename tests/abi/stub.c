/* Stands for the libgpuzones.so.0 of another release that a program ships:
 * the same soname, its own private version node (stub.map). */
__attribute__((visibility("default"))) int gz_stub_release(void);

int gz_stub_release(void) { return 0; }
