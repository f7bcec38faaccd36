/* Stands for the libgpuzones.so.0 of another release that a program ships:
 * the same soname, its own private version node (other_release.map). */
__attribute__((visibility("default"))) int gz_other_release(void);

int gz_other_release(void) { return 0; }
