; Meep's straight waveguide (its tutorial's first example): a dielectric
; strip in a 16x8 cell with PML, a continuous source, 4,000 time steps.
; The corpus of cmd/kairos/realapps_test.go runs it on 4 ranks.
(set-param! resolution 20)
(set! geometry-lattice (make lattice (size 16 8 no-size)))
(set! geometry (list (make block (center 0 0) (size infinity 1 infinity)
                       (material (make medium (epsilon 12))))))
(set! sources (list (make source (src (make continuous-src (frequency 0.15)))
                      (component Ez) (center -7 0))))
(set! pml-layers (list (make pml (thickness 1.0))))
(run-until 100)
