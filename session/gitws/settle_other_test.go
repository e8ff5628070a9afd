//go:build !unix

package gitws

func settle() {}
